"""OS::Heat::SoftwareDeployment in stacks: the derived config an agent
reads, completion on the agent's signal or on an update of the
deployment through the API, failure, NO_SIGNAL, outputs as attributes,
and nothing left after a delete."""

import json
import uuid

import requests

from harness import helpers, polling

SCRIPT = "#!/bin/sh\necho hello"


def _template(server, **deploy):
    props = {
        "config": {"get_resource": "config"},
        "server": server,
        "input_values": {"who": "world", "extra": 3},
    }
    props.update(deploy)
    return helpers.template(
        {
            "config": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {
                    "group": "script",
                    "config": SCRIPT,
                    "inputs": [{"name": "who"}, {"name": "greeting"}],
                    "outputs": [
                        {"name": "result"},
                        {"name": "problem", "error_output": True},
                    ],
                },
            },
            "deploy": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": props,
            },
        },
        outputs={
            "result": {"value": {"get_attr": ["deploy", "result"]}},
            "stdout": {"value": {"get_attr": ["deploy", "deploy_stdout"]}},
        },
    )


def _start(heat, stack_name, **deploy):
    server = "server-" + uuid.uuid4().hex[:8]
    stack_id = helpers.create(heat, stack_name, _template(server, **deploy))
    return stack_id, server


def _deployment(heat, server):
    return polling.until(
        lambda: heat.software_deployments.list(server_id=server),
        what="a deployment of " + server,
    )[0]


def _outputs(heat, stack_id):
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def test_signal_completes_it(deployment):
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    stack_id, server = _start(heat, "signalled", name="20-deploy")
    made = _deployment(heat, server)
    assert (made.action, made.status) == ("CREATE", "IN_PROGRESS")
    assert made.input_values == {"who": "world", "extra": 3}
    metadata = heat.software_deployments.metadata(server)
    assert [c["name"] for c in metadata] == ["20-deploy"]
    derived = metadata[0]
    assert (derived["group"], derived["config"]) == ("script", SCRIPT)
    values = {i["name"]: i.get("value") for i in derived["inputs"]}
    assert values["who"] == "world"
    assert values["greeting"] is None
    assert values["extra"] == 3
    assert values["deploy_server_id"] == server
    assert values["deploy_action"] == "CREATE"
    assert values["deploy_resource_name"] == "deploy"
    assert values["deploy_stack_id"] == "signalled/" + stack_id
    assert values["deploy_signal_transport"] == "CFN_SIGNAL"
    assert values["deploy_signal_verb"] == "POST"
    # It waits for the signal.
    polling.stays(
        lambda: heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS",
        1,
    )
    # As heat-config-notify sends it (CFN_SIGNAL): a POST of the outputs
    # to deploy_signal_id.
    sent = requests.post(
        values["deploy_signal_id"],
        data=json.dumps(
            {
                "result": "done",
                "deploy_stdout": "hello",
                "deploy_status_code": 0,
            }
        ),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert sent.status_code == 200, sent.text
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert _outputs(heat, stack_id) == {"result": "done", "stdout": "hello"}
    done = heat.software_deployments.get(made.id)
    assert (done.status, done.status_reason) == (
        "COMPLETE",
        "Outputs received",
    )
    assert done.output_values["deploy_status_code"] == 0
    # Deleting the stack deletes the deployment and the configs.
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert heat.software_deployments.list() == []
    assert heat.software_configs.list() == []


def test_api_update_completes_or_fails_it(deployment):
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    ok_id, ok_server = _start(heat, "ok")
    bad_id, bad_server = _start(heat, "bad")
    heat.software_deployments.update(
        _deployment(heat, ok_server).id,
        status="COMPLETE",
        output_values={"result": "via api"},
    )
    heat.software_deployments.update(
        _deployment(heat, bad_server).id,
        status="FAILED",
        status_reason="the agent gave up",
    )
    helpers.wait_for_status(heat, ok_id, "CREATE_COMPLETE")
    assert _outputs(heat, ok_id)["result"] == "via api"
    failed = helpers.wait_for_status(heat, bad_id, "CREATE_FAILED")
    assert "the agent gave up" in failed.stack_status_reason


def test_failing_signal_and_no_signal(deployment):
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    stack_id, server = _start(heat, "failing", signal_transport="HEAT_SIGNAL")
    _deployment(heat, server)
    heat.resources.signal(
        stack_id, "deploy", data={"deploy_status_code": 2, "problem": "x"}
    )
    failed = helpers.wait_for_status(heat, stack_id, "CREATE_FAILED")
    assert "non-zero status code: 2" in failed.stack_status_reason
    assert "problem : x" in failed.stack_status_reason
    quick_id, quick_server = _start(
        heat, "quick", signal_transport="NO_SIGNAL"
    )
    helpers.wait_for_status(heat, quick_id, "CREATE_COMPLETE")
    assert _deployment(heat, quick_server).status == "COMPLETE"


def test_update_redeploys(deployment):
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    stack_id, server = _start(heat, "updated", signal_transport="NO_SIGNAL")
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    first = _deployment(heat, server)
    tmpl = _template(
        server, signal_transport="NO_SIGNAL", input_values={"who": "you"}
    )
    heat.stacks.update(stack_id, template=tmpl)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    again = heat.software_deployments.get(first.id)
    assert (again.action, again.input_values) == ("UPDATE", {"who": "you"})
    assert again.config_id != first.config_id
    metadata = heat.software_deployments.metadata(server)
    values = {i["name"]: i.get("value") for i in metadata[0]["inputs"]}
    assert (values["who"], values["deploy_action"]) == ("you", "UPDATE")
    # The old derived config is gone: only the source and the new one.
    assert len(heat.software_configs.list()) == 2


def test_server_metadata_lists_its_deployments(deployment):
    """What os-collect-config reads: the server resource's metadata
    holds the server's deployments (a test resource stands in for the
    server, under the server's type name)."""
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    tmpl = _template({"get_resource": "server"}, signal_transport="NO_SIGNAL")
    tmpl["resources"]["server"] = {
        "type": "OS::Nova::Server",
        "properties": {"value": "vm"},
    }
    stack_id = helpers.create(
        heat,
        "withserver",
        tmpl,
        environment={
            "resource_registry": {"OS::Nova::Server": "OS::Heat::TestResource"}
        },
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    server_id = heat.resources.get(stack_id, "server").physical_resource_id
    metadata = heat.resources.metadata(stack_id, "server")
    assert metadata["deployments"] == heat.software_deployments.metadata(
        server_id
    )
    inputs = {
        i["name"]: i.get("value") for i in metadata["deployments"][0]["inputs"]
    }
    assert inputs["deploy_server_id"] == server_id
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert heat.software_deployments.list() == []


def _structured(server, **deploy):
    props = {
        "config": {"get_resource": "config"},
        "server": server,
        "signal_transport": "NO_SIGNAL",
        "input_values": {"port": 8080},
    }
    props.update(deploy)
    return helpers.template(
        {
            "config": {
                "type": "OS::Heat::StructuredConfig",
                "properties": {
                    "group": "os-apply-config",
                    "config": {
                        "listen": {"port": {"get_input": "port"}},
                        "on": [{"get_input": "deploy_action"}, "kept"],
                        "literal": {"get_input": "port", "other": 1},
                        "missing": {"get_input": "nowhere"},
                    },
                },
            },
            "deploy": {
                "type": "OS::Heat::StructuredDeployment",
                "properties": props,
            },
        }
    )


def test_structured_deployment_substitutes_inputs(deployment):
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    server = "server-" + uuid.uuid4().hex[:8]
    stack_id = helpers.create(heat, "structured", _structured(server))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    source = heat.software_configs.get(
        heat.resources.get(stack_id, "config").physical_resource_id
    )
    assert source.config["listen"] == {"port": {"get_input": "port"}}
    [derived] = heat.software_deployments.metadata(server)
    assert derived["group"] == "os-apply-config"
    assert derived["config"] == {
        "listen": {"port": 8080},
        "on": ["CREATE", "kept"],
        "literal": {"get_input": "port", "other": 1},
        "missing": None,
    }
    strict_server = "server-" + uuid.uuid4().hex[:8]
    strict_id = helpers.create(
        heat,
        "strict",
        _structured(strict_server, input_values_validate="STRICT"),
    )
    failed = helpers.wait_for_status(heat, strict_id, "CREATE_FAILED")
    assert "nowhere" in failed.stack_status_reason


def test_deployment_group(deployment):
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    servers = {n: "server-%s-%s" % (n, uuid.uuid4().hex[:6]) for n in "ab"}
    tmpl = _template("unused")
    deploy = tmpl["resources"]["deploy"]
    deploy["type"] = "OS::Heat::SoftwareDeploymentGroup"
    del deploy["properties"]["server"]
    deploy["properties"]["servers"] = servers
    tmpl["outputs"] = {
        "stdouts": {"value": {"get_attr": ["deploy", "deploy_stdouts"]}},
        "codes": {"value": {"get_attr": ["deploy", "deploy_status_codes"]}},
    }
    stack_id = helpers.create(heat, "group", tmpl)
    for name, server in servers.items():
        heat.software_deployments.update(
            _deployment(heat, server).id,
            status="COMPLETE",
            output_values={
                "deploy_stdout": "out " + name,
                "deploy_status_code": 0,
            },
        )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert _outputs(heat, stack_id) == {
        "stdouts": {"a": "out a", "b": "out b"},
        "codes": {"a": 0, "b": 0},
    }
    # A server left out of the map loses its deployment.
    deploy["properties"]["servers"] = {"a": servers["a"]}
    deploy["properties"]["signal_transport"] = "NO_SIGNAL"
    heat.stacks.update(stack_id, template=tmpl)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.software_deployments.list(server_id=servers["b"]) == []
    assert len(heat.software_deployments.list(server_id=servers["a"])) == 1


def test_delete_action_and_replace_on_change(deployment):
    heat = deployment.client("sdr" + uuid.uuid4().hex[:8])
    stack_id, server = _start(
        heat, "cleanup", actions=["CREATE", "DELETE"], input_values={}
    )
    made = _deployment(heat, server)
    heat.software_deployments.update(made.id, status="COMPLETE")
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    # An update is not one of its actions: nothing is deployed.
    heat.stacks.update(
        stack_id,
        template=_template(
            server, actions=["CREATE", "DELETE"], input_values={"who": "x"}
        ),
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.software_deployments.get(made.id).action == "CREATE"
    # The delete deploys DELETE and waits for it.
    heat.stacks.delete(stack_id)
    deleting = polling.until(
        lambda: (
            heat.software_deployments.get(made.id).action == "DELETE"
            and heat.software_deployments.get(made.id)
        ),
        what="the DELETE deployment",
    )
    assert deleting.status == "IN_PROGRESS"
    assert heat.stacks.get(stack_id).stack_status == "DELETE_IN_PROGRESS"
    heat.software_deployments.update(made.id, status="COMPLETE")
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert heat.software_deployments.list() == []
    # An input marked replace_on_change replaces the deployment.
    tmpl = _template(server, signal_transport="NO_SIGNAL")
    tmpl["resources"]["config"]["properties"]["inputs"][0][
        "replace_on_change"
    ] = True
    stack_id = helpers.create(heat, "replaced", tmpl)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    first = _deployment(heat, server).id
    tmpl["resources"]["deploy"]["properties"]["input_values"]["extra"] = 4
    heat.stacks.update(stack_id, template=tmpl)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert [d.id for d in heat.software_deployments.list()] == [first]
    tmpl["resources"]["deploy"]["properties"]["input_values"]["who"] = "new"
    heat.stacks.update(stack_id, template=tmpl)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    [again] = heat.software_deployments.list()
    assert again.id != first
    assert (again.action, again.input_values["who"]) == ("CREATE", "new")
