"""The README's keystone-mode session, as a newcomer types it: the test
cloud, a heat_lite in keystone mode listed in its catalog
(``python -m tools.minicloud heat-lite start``), and ``openstack stack``
with nothing but the cloud's ``clouds.yaml``: no endpoint override, no
token, no URL. Stopping it puts the catalog back as it was."""

import os
import subprocess
import sys

import pytest

from harness import deployment as deployment_mod
from tools.minicloud import layout

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(600),
]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
TEMPLATE = """heat_template_version: 2018-08-31
resources:
  net:
    type: OS::Neutron::Net
  secret:
    type: OS::Heat::RandomString
outputs:
  net:
    value: {get_resource: net}
"""


def _run(args, env, timeout=300):
    done = subprocess.run(
        args,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def test_the_readme_keystone_session(cloud, tmp_path):
    directory = cloud.layout.dir
    before = layout.Layout.load(directory).orchestration_url
    plain = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    minicloud = [sys.executable, "-m", "tools.minicloud", "--dir", directory]
    said = _run([*minicloud, "heat-lite", "start"], plain)
    assert "keystone mode" in said
    started = layout.Layout.load(directory).orchestration_url
    assert started and started != before
    try:
        env = dict(
            plain,
            OS_CLIENT_CONFIG_FILE=cloud.layout.clouds_yaml,
            OS_CLOUD="minicloud-demo",
        )
        path = tmp_path / "net.yaml"
        path.write_text(TEMPLATE)
        osc = deployment_mod.command("openstack")
        status = _run(
            [osc, "stack", "create", "-t", str(path), "--wait", "readme"]
            + ["-f", "value", "-c", "stack_status"],
            env,
        )
        # --wait prints the events, then the asked column
        assert status.strip().splitlines()[-1] == "CREATE_COMPLETE"
        net = _run(
            [osc, "stack", "output", "show", "readme", "net"]
            + ["-f", "value", "-c", "output_value"],
            env,
        ).strip()
        assert cloud.connect("demo").network.get_network(net).id == net
        _run([osc, "stack", "delete", "-y", "--wait", "readme"], env)
        assert "readme" not in _run([osc, "stack", "list"], env)
    finally:
        _run([*minicloud, "heat-lite", "stop"], plain)
    assert layout.Layout.load(directory).orchestration_url == before
    assert not os.path.exists(
        os.path.join(directory, "heat_lite", "heat.json")
    )
