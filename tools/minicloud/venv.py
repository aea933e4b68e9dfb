"""The test cloud's virtualenv: installed once, cached, keyed by its pins.

The five services and their tools install from PyPI into one venv, apart
from heat_lite's own (their dependency sets differ). The venv's directory
name carries a digest of ``constraints.txt`` and of the ML2 driver's
sources, so a change to either makes a new venv and an unchanged tree
reuses the cached one. A venv counts only once its install finished
(a marker file written last); a half-made one is removed and redone.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONSTRAINTS = os.path.join(HERE, "constraints.txt")
DRIVER = os.path.join(HERE, "ml2_driver")
DEFAULT_CACHE = os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
    "heat_lite",
)
# What the cloud needs; the versions come from constraints.txt.
PACKAGES = [
    "keystone",
    "glance",
    "openstack-placement",
    "nova",
    "neutron",
    "openstacksdk",
    "gunicorn",
    "PyMySQL",
]
_MARKER = ".minicloud-complete"


def digest():
    """12 hex digits naming the pins and the driver's sources."""
    sha = hashlib.sha256()
    paths = [CONSTRAINTS]
    for root, dirs, files in os.walk(DRIVER):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith((".", "_"))
            and not d.endswith(".egg-info")
            and d != "build"
        )
        paths.extend(
            os.path.join(root, f)
            for f in sorted(files)
            if f.endswith((".py", ".cfg", ".toml"))
        )
    for path in paths:
        sha.update(os.path.relpath(path, HERE).encode())
        with open(path, "rb") as f:
            sha.update(f.read())
    return sha.hexdigest()[:12]


def path(cache_dir=None):
    return os.path.join(
        cache_dir or DEFAULT_CACHE, "minicloud-venv-%s" % digest()
    )


def ready(venv):
    return os.path.exists(os.path.join(venv, _MARKER))


def ensure(cache_dir=None, log=print):
    """Return the path of a complete venv, installing it if needed.

    :returns: (venv path, seconds spent installing or 0.0)
    :raises subprocess.CalledProcessError: if pip fails (its output is in
        ``<venv>.install.log``).
    """
    venv = path(cache_dir)
    if ready(venv):
        return venv, 0.0
    started = time.monotonic()
    shutil.rmtree(venv, ignore_errors=True)
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    log("installing the test cloud into %s (about a minute)" % venv)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [
        os.path.join(venv, "bin", "pip"),
        "install",
        "-q",
        "--disable-pip-version-check",
    ]
    with open(venv + ".install.log", "w") as out:
        # One pip run (isolated build of the driver: the venv's own
        # setuptools may be too old to build it without isolation).
        subprocess.run(
            pip + ["-c", CONSTRAINTS, *PACKAGES, DRIVER],
            check=True,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    open(os.path.join(venv, _MARKER), "w").close()
    return venv, time.monotonic() - started
