"""Tempest's virtualenv: installed once, cached, keyed by its pins.

tempest and heat-tempest-plugin install from PyPI into a venv apart from
heat_lite's own (their dependency sets differ). The directory name carries
a digest of ``requirements.txt``, so a change of pins makes a new venv and
an unchanged one reuses the cache. A venv counts only once its install
finished (a marker file written last); a half-made one is redone.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import time

from tools.minicloud import venv as minicloud_venv

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "requirements.txt")
_MARKER = ".tempest-complete"


def digest(requirements=REQUIREMENTS):
    """12 hex digits naming the pinned requirements."""
    with open(requirements, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def path(cache_dir=None):
    return os.path.join(
        cache_dir or minicloud_venv.DEFAULT_CACHE, "tempest-venv-%s" % digest()
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
    log("installing tempest into %s (a few minutes)" % venv)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    with open(venv + ".install.log", "w") as out:
        subprocess.run(
            [
                os.path.join(venv, "bin", "pip"),
                "install",
                "-q",
                "--disable-pip-version-check",
                "-r",
                REQUIREMENTS,
            ],
            check=True,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    open(os.path.join(venv, _MARKER), "w").close()
    return venv, time.monotonic() - started
