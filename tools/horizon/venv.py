"""Horizon's virtualenv: installed once, cached, keyed by its pins.

Horizon 27.0.0 and heat-dashboard 16.0.0 from PyPI into a venv apart
from heat_lite's (Django and its friends are none of heat_lite's
business). Once pip is done, the plugin is installed into Horizon's tree
as heat-dashboard's documentation says (its panels into
``openstack_dashboard/local/enabled``, its policy files into
``openstack_dashboard/conf``, its settings snippet into
``local/local_settings.d``), and the static assets are collected and
compressed offline into ``<venv>/horizon-static``, once for every
Horizon served from the venv. Only then does the venv count as complete.
"""

import glob
import os
import shutil
import subprocess
import time

from tools import cached_venv
from tools.horizon import settings

HERE = os.path.dirname(os.path.abspath(__file__))
CONSTRAINTS = os.path.join(HERE, "constraints.txt")
PACKAGES = ["horizon==27.0.0", "heat-dashboard==16.0.0"]
MARKER = ".horizon-complete"
STATIC = "horizon-static"
SETTINGS_MODULE = "openstack_dashboard.settings"


def path(cache_dir=None):
    # The pins, the steps after pip (this file) and the settings the
    # static assets are built with.
    digest = cached_venv.file_digest(
        CONSTRAINTS, os.path.abspath(__file__), settings.__file__
    )
    return os.path.join(
        cache_dir or cached_venv.CACHE, "horizon-venv-%s" % digest
    )


def site_packages(venv):
    pattern = os.path.join(venv, "lib", "python3*", "site-packages")
    (found,) = glob.glob(pattern)
    return found


def static_root(venv):
    return os.path.join(venv, STATIC)


def django_env(venv, settings_dir):
    """The environment of Horizon's processes whose ``local`` package (the
    settings) is in ``settings_dir``."""
    return dict(
        os.environ,
        PYTHONPATH=settings_dir,
        DJANGO_SETTINGS_MODULE=SETTINGS_MODULE,
        PYTHONWARNINGS="ignore",
    )


def write_settings(settings_dir, venv, **values):
    """``<settings_dir>/local/local_settings.py`` (a package of its own)."""
    local = os.path.join(settings_dir, "local")
    os.makedirs(local, exist_ok=True)
    open(os.path.join(local, "__init__.py"), "w").close()
    with open(os.path.join(local, "local_settings.py"), "w") as f:
        f.write(
            settings.render(
                local_path=local, static_root=static_root(venv), **values
            )
        )


def _install_plugin(venv):
    """heat-dashboard's files into Horizon's tree (its install guide)."""
    site = site_packages(venv)
    plugin = os.path.join(site, "heat_dashboard")
    horizon = os.path.join(site, "openstack_dashboard")
    copies = [
        (
            os.path.join(plugin, "enabled", "_16*.py"),
            os.path.join(horizon, "local", "enabled"),
        ),
        (
            os.path.join(plugin, "conf", "heat_policy.yaml"),
            os.path.join(horizon, "conf"),
        ),
        (
            os.path.join(plugin, "conf", "default_policies", "heat.yaml"),
            os.path.join(horizon, "conf", "default_policies"),
        ),
        (
            os.path.join(plugin, "local_settings.d", "_1699_*.py"),
            os.path.join(horizon, "local", "local_settings.d"),
        ),
    ]
    for pattern, target in copies:
        os.makedirs(target, exist_ok=True)
        found = glob.glob(pattern)
        if not found:
            raise RuntimeError("heat-dashboard has no %s" % pattern)
        for source in found:
            shutil.copy(source, target)


def _build_static(venv, log):
    """collectstatic and compress --force, with the settings every
    Horizon of this venv has (the Keystone URL does not matter here)."""
    began = time.monotonic()
    build = os.path.join(venv, "horizon-build")
    write_settings(
        build,
        venv,
        keystone_url="http://127.0.0.1:5000/v3",
        secret="static-build",
    )
    python = os.path.join(venv, "bin", "python")
    with open(venv + ".static.log", "w") as out:
        for argv in (
            ["collectstatic", "--noinput", "-v0"],
            ["compress", "--force", "-v0"],
        ):
            subprocess.run(
                [python, "-m", "django", *argv],
                check=True,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=django_env(venv, build),
                timeout=900,
            )
    with open(os.path.join(venv, "horizon-static.seconds"), "w") as f:
        f.write("%.1f\n" % (time.monotonic() - began))
    log("static assets collected and compressed into %s" % static_root(venv))


def ensure(cache_dir=None, log=print):
    """Return (venv path, seconds spent installing or 0.0).

    :raises subprocess.CalledProcessError: if pip or a Django command
        fails (their output is in ``<venv>.install.log`` and
        ``<venv>.static.log``).
    """
    venv = path(cache_dir)

    def after(made):
        _install_plugin(made)
        _build_static(made, log)

    spent = cached_venv.ensure(
        venv,
        ["-c", CONSTRAINTS, *PACKAGES],
        "Horizon with heat-dashboard (about three minutes)",
        marker=MARKER,
        log=log,
        after=after,
    )
    return venv, spent
