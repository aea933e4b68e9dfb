"""A virtualenv holding OpenStack Heat 27 from PyPI, for the comparison.

The versions are pinned in ``bench/heat-constraints.txt`` (openstack-heat
itself and everything it pulled in when the file was written), so that
every rerun measures the same Heat. The venv is cached under
``~/.cache/heat_lite/bench-heat-venv-<hash>``, keyed by the hash of the
constraints file: editing the pins builds a new one, rerunning reuses it
(installing Heat takes minutes). A venv whose install did not finish has
no ``.complete`` marker and is rebuilt.
"""

import os
import subprocess

from tools import cached_venv

HERE = os.path.dirname(os.path.abspath(__file__))
CONSTRAINTS = os.path.join(HERE, "heat-constraints.txt")
CACHE = cached_venv.CACHE
# What the comparison needs in Heat's venv besides Heat: the PostgreSQL
# driver its database URL names, and a WSGI server for heat-api (Heat 27
# ships heat-api only as a WSGI application, heat-wsgi-api).
PACKAGES = ("openstack-heat", "psycopg2-binary", "gunicorn")
INSTALL_TIMEOUT = 1800


def constraints_hash(path=CONSTRAINTS):
    return cached_venv.file_digest(path)


def pinned_version(name, path=CONSTRAINTS):
    """The version ``path`` pins for ``name`` (None if not pinned)."""
    with open(path) as f:
        for line in f:
            pkg, sep, version = line.split("#")[0].strip().partition("==")
            if sep and pkg.lower() == name.lower():
                return version
    return None


def venv_dir(path=CONSTRAINTS):
    return os.path.join(CACHE, "bench-heat-venv-%s" % constraints_hash(path))


def ensure(path=CONSTRAINTS, echo=print):
    """Return the bin directory of a venv with Heat installed, building
    it first if there is no complete one for these constraints (pip's
    output is in ``<venv>.install.log`` if it fails)."""
    target = venv_dir(path)
    cached_venv.ensure(
        target,
        ["-c", path, *PACKAGES],
        "Heat (takes minutes)",
        log=echo,
        timeout=INSTALL_TIMEOUT,
    )
    return os.path.join(target, "bin")


def installed_version(bin_dir):
    """openstack-heat's version in the venv, as pip reports it."""
    result = subprocess.run(
        [os.path.join(bin_dir, "pip"), "show", "openstack-heat"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    for line in result.stdout.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return None
