"""A deployment signalled by the in-guest agent's own notifier:
``heat-config-notify`` from the heat-agents distribution (PyPI), run on
the host as a server's agent runs it after a hook -- the deployment's
config from the server's metadata as its argument, the hook's outputs on
stdin -- completes the deployment resource with those outputs."""

import json
import subprocess
import sys
import tarfile
import uuid

import pytest

from harness import helpers, polling
from tools import cached_venv

HEAT_AGENTS = "heat-agents==13.0.0"
NOTIFY = "heat-config/bin/heat-config-notify"


@pytest.fixture(scope="module")
def notify(tmp_path_factory):
    """The heat-config-notify script of the heat-agents source
    distribution (the wheel leaves the agent scripts out)."""
    where = tmp_path_factory.mktemp("heat-agents")
    sdist = cached_venv.sdist(HEAT_AGENTS, timeout=300)
    with tarfile.open(sdist) as archive:
        [member] = [m for m in archive.getmembers() if m.name.endswith(NOTIFY)]
        archive.extract(member, where, filter="data")
    return where / member.name


def test_heat_config_notify_completes_the_deployment(
    deployment, notify, tmp_path
):
    heat = deployment.client("sda" + uuid.uuid4().hex[:8])
    server = "server-" + uuid.uuid4().hex[:8]
    tmpl = helpers.template(
        {
            "config": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {
                    "group": "script",
                    "config": "#!/bin/sh\necho hi > $heat_outputs_path.who",
                    "inputs": [{"name": "who"}],
                    "outputs": [{"name": "who"}],
                },
            },
            "deploy": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": {
                    "config": {"get_resource": "config"},
                    "server": server,
                    "input_values": {"who": "agent"},
                },
            },
        },
        outputs={
            "who": {"value": {"get_attr": ["deploy", "who"]}},
            "code": {"value": {"get_attr": ["deploy", "deploy_status_code"]}},
        },
    )
    stack_id = helpers.create(heat, "agent", tmpl)
    [config] = _metadata(heat, server)
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps(config))
    outputs = {
        "who": "agent was here",
        "deploy_stdout": "hi\n",
        "deploy_stderr": "",
        "deploy_status_code": 0,
    }
    run = subprocess.run(
        [sys.executable, str(notify), str(path)],
        input=json.dumps(outputs),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "Response <Response [200]>" in run.stderr
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    stack = heat.stacks.get(stack_id)
    got = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert got == {"who": "agent was here", "code": 0}


def _metadata(heat, server):
    return polling.until(
        lambda: heat.software_deployments.metadata(server),
        what="the deployment in the server's metadata",
    )
