"""The committed sample config must match what the code registers."""

import os

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
