"""The [apps] options as the builders get them, and a checkout."""

import os

import pytest
from oslo_config import cfg

from heat_lite.conf import apps


@pytest.fixture
def make_conf():
    def make(**overrides):
        conf = cfg.ConfigOpts()
        apps.register_opts(conf)
        conf(args=[], default_config_files=[], default_config_dirs=[])
        for name, value in overrides.items():
            conf.set_override(name, value, group="apps")
        return conf.apps

    return make


@pytest.fixture
def checkout(tmp_path):
    """The files of a commit, as source.fetch_commit leaves them."""
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "app.py").write_text("print('hello')\n")
    (tree / "README").write_text("an app\n")
    os.symlink("src/app.py", tree / "link")
    return str(tree)


@pytest.fixture
def scratch(tmp_path):
    path = tmp_path / "scratch"
    path.mkdir()
    return str(path)


def run_builder(builder, checkout, scratch, options):
    """Validate ``options`` and build; return (artifact, log lines)."""
    lines = []
    art = builder.build(
        checkout, builder.validate_options(options), scratch, lines.append
    )
    return art, lines
