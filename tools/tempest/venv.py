"""Tempest's virtualenv: installed once, cached, keyed by its pins.

tempest and heat-tempest-plugin install from PyPI into a venv apart from
heat_lite's own (their dependency sets differ). The directory name carries
a digest of ``requirements.txt``, so a change of pins makes a new venv and
an unchanged one reuses the cache. A venv counts only once its install
finished (a marker file written last); a half-made one is redone.
"""

import os

from tools import cached_venv

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "requirements.txt")


def digest(requirements=REQUIREMENTS):
    """12 hex digits naming the pinned requirements."""
    return cached_venv.file_digest(requirements)


def path(cache_dir=None):
    return os.path.join(
        cache_dir or cached_venv.CACHE, "tempest-venv-%s" % digest()
    )


def ensure(cache_dir=None, log=print):
    """Return the path of a complete venv, installing it if needed.

    :returns: (venv path, seconds spent installing or 0.0)
    """
    venv = path(cache_dir)
    spent = cached_venv.ensure(
        venv,
        ["-r", REQUIREMENTS],
        "tempest (a few minutes)",
        marker=".tempest-complete",
        log=log,
    )
    return venv, spent
