"""What one test module does to oslo.config, the next one does not see
(tests/conftest.py ``config_reset``, harness/config.py)."""

import os
import subprocess
import sys
import textwrap

from oslo_config import cfg

from harness import config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))

LEAKS = """
from oslo_config import cfg

from heat_lite import conf


def test_leaves_config_behind():
    conf.CONF.set_override("stall_timeout", 123.0, group="engine")
    conf.CONF.set_default("max_stacks_per_tenant", 7)
    conf.CONF.register_cli_opt(cfg.StrOpt("leaked-cli"))
    conf.CONF([], project="heat_lite")
"""

SEES = """
from heat_lite import conf


def test_sees_none_of_it():
    CONF = conf.CONF
    CONF([], project="heat_lite")
    assert CONF.engine.stall_timeout != 123.0
    assert CONF.max_stacks_per_tenant != 7
    assert "leaked_cli" not in CONF
"""


def _run(tmp_path, conftest):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest))
    (tmp_path / "test_a_leaks.py").write_text(LEAKS)
    (tmp_path / "test_b_sees.py").write_text(SEES)
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + ["-p", "no:xdist", "-p", "no:randomly", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_module_does_not_see_what_the_one_before_left(tmp_path):
    done = _run(tmp_path, "from tests.conftest import config_reset  # noqa")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_without_the_reset_the_leak_shows(tmp_path):
    # The same two modules, the reset left out: the second one fails, so
    # the test above proves the reset and not a harmless pair.
    done = _run(tmp_path, "")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout


def test_restore_puts_back_overrides_defaults_and_cli_options():
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.IntOpt("a", default=1)], group="g")
    conf.register_opt(cfg.StrOpt("b", default="x"))
    conf.set_override("a", 5, group="g")
    snap = config.snapshot(conf)

    conf.set_override("a", 6, group="g")
    conf.set_default("b", "y")
    conf.register_cli_opt(cfg.StrOpt("c"))
    conf.register_opt(cfg.IntOpt("d", default=0))
    conf.set_override("d", 9)
    conf([])
    assert (conf.g.a, conf.b, conf.d) == (6, "y", 9)

    assert config.restore(conf, snap) == [
        "DEFAULT.b",
        "DEFAULT.c",
        "DEFAULT.d",
        "g.a",
    ]
    conf([])
    assert (conf.g.a, conf.b, conf.d) == (5, "x", 0)
    assert "c" not in conf
    assert config.restore(conf, config.snapshot(conf)) == []
