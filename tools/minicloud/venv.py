"""The test cloud's virtualenv: installed once, cached, keyed by its pins.

The five services and their tools install from PyPI into one venv, apart
from heat_lite's own (their dependency sets differ). The venv's directory
name carries a digest of ``constraints.txt`` and of the ML2 driver's
sources, so a change to either makes a new venv and an unchanged tree
reuses the cached one. A venv counts only once its install finished
(a marker file written last); a half-made one is removed and redone.
"""

import os

from tools import cached_venv

HERE = os.path.dirname(os.path.abspath(__file__))
CONSTRAINTS = os.path.join(HERE, "constraints.txt")
DRIVER = os.path.join(HERE, "ml2_driver")
DEFAULT_CACHE = cached_venv.CACHE
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


def digest():
    """12 hex digits naming the pins and the driver's sources."""
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
    return cached_venv.file_digest(*paths, root=HERE)


def path(cache_dir=None):
    return os.path.join(
        cache_dir or DEFAULT_CACHE, "minicloud-venv-%s" % digest()
    )


def ensure(cache_dir=None, log=print):
    """Return the path of a complete venv, installing it if needed.

    One pip run, with an isolated build of the driver (the venv's own
    setuptools may be too old to build it without isolation).

    :returns: (venv path, seconds spent installing or 0.0)
    :raises subprocess.CalledProcessError: if pip fails (its output is in
        ``<venv>.install.log``).
    """
    venv = path(cache_dir)
    spent = cached_venv.ensure(
        venv,
        ["-c", CONSTRAINTS, *PACKAGES, DRIVER],
        "the test cloud (about a minute)",
        marker=".minicloud-complete",
        log=log,
    )
    return venv, spent
