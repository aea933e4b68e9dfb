"""Every package of the source tree ships: setup.cfg lists packages by
hand (the migrations come from alembic/), and a missing one only shows in
a built wheel -- editable installs hide it (as heat_lite.engine.fleet
once was)."""

import configparser
import os

import heat_lite

ROOT = os.path.dirname(os.path.dirname(heat_lite.__file__))


def _listed():
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, "setup.cfg"))
    return set(config["options"]["packages"].split())


def _in_tree():
    found = set()
    top = os.path.join(ROOT, "heat_lite")
    for folder, _dirs, files in os.walk(top):
        if "__init__.py" in files:
            rel = os.path.relpath(folder, ROOT)
            found.add(rel.replace(os.sep, "."))
    return found


def test_every_package_is_listed_in_setup_cfg():
    missing = _in_tree() - _listed()
    assert not missing, "add to [options] packages: %s" % sorted(missing)
