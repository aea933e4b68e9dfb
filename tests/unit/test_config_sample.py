"""The committed sample config must match what the code registers."""

import os
import subprocess
import sys

from oslo_config import generator

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
GEN_CONF = os.path.join(
    ROOT, "etc", "heat_lite", "heat_lite-config-generator.conf"
)
SAMPLE = os.path.join(ROOT, "etc", "heat_lite", "heat_lite.conf.sample")


def test_sample_is_current(tmp_path):
    out = tmp_path / "sample"
    generator.main(["--config-file", GEN_CONF, "--output-file", str(out)])
    with open(SAMPLE) as f:
        committed = f.read()
    assert out.read_text() == committed, (
        "etc/heat_lite/heat_lite.conf.sample is stale: run tox -e genconfig"
    )


def test_operator_option_names_exist():
    # The submodule itself: `heat_lite.conf` alone has `opts` only when some
    # earlier test in the same worker happened to import it.
    from heat_lite.conf import opts as conf_opts

    opts = dict(conf_opts.list_opts())
    names = {g: {o.name for o in group} for g, group in opts.items()}
    assert {"bind_host", "bind_port", "auth_strategy"} <= names["api"]
    assert "connection" in names["database"]
    assert "transport_url" in names["DEFAULT"]


POLICY_GEN_CONF = os.path.join(
    ROOT, "etc", "heat_lite", "heat_lite-policy-generator.conf"
)
POLICY_SAMPLE = os.path.join(ROOT, "etc", "heat_lite", "policy.yaml.sample")


def test_policy_sample_is_current_and_the_generator_runs(tmp_path):
    """``oslopolicy-sample-generator`` as an operator runs it (a process
    of its own: it parses its command line before it loads our rules,
    which once made our options' registration fail)."""
    out = tmp_path / "policy.yaml"
    tool = os.path.join(
        os.path.dirname(sys.executable), "oslopolicy-sample-generator"
    )
    result = subprocess.run(
        [tool, "--config-file", POLICY_GEN_CONF, "--output-file", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    with open(POLICY_SAMPLE) as f:
        committed = f.read()
    assert out.read_text() == committed, (
        "etc/heat_lite/policy.yaml.sample is stale: run "
        "oslopolicy-sample-generator --config-file "
        "etc/heat_lite/heat_lite-policy-generator.conf"
    )
