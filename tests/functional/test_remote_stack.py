"""OS::Heat::Stack against a real second heat_lite.

The remote cloud is another ``heat-lite-all`` (noauth) started here on
its own port; the local deployment reaches it through keystoneauth1's
``none`` auth plugin and ``[remote_stack] endpoint_override``.
"""

import json
import uuid

import pytest
import requests
from heatclient import exc as heat_exc

from harness import deployment as deployment_mod
from harness import helpers
from tests.functional import conftest

REMOTE_PROJECT = "far"
REMOTE_TMPL = helpers.template(
    {
        "v": {
            "type": "OS::Heat::TestResource",
            "properties": {
                "value": {"get_param": "value"},
                "fail": {"get_param": "fail"},
            },
        }
    },
    outputs={"out": {"value": {"get_attr": ["v", "output"]}}},
    parameters={
        "value": {"type": "string"},
        "fail": {"type": "boolean", "default": False},
    },
)


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("remote")
    )


@pytest.fixture(scope="module", params=conftest.KINDS)
def local(request, remote, tmp_path_factory):
    extra = (
        "\n[remote_stack]\nauth_type = none\nendpoint_override = %s\n"
        "poll_interval = 0.2\n" % remote.endpoint(REMOTE_PROJECT)
    )
    yield from deployment_mod.running(
        request.param,
        tmp_path_factory.mktemp("local-" + request.param),
        extra_conf=extra,
    )


def _local_template(**params):
    return helpers.template(
        {
            "far": {
                "type": "OS::Heat::Stack",
                "properties": {
                    "template": json.dumps(REMOTE_TMPL),
                    "timeout": 10,
                    "parameters": params,
                },
            }
        },
        outputs={
            "out": {"value": {"get_attr": ["far", "outputs", "out"]}},
            "name": {"value": {"get_attr": ["far", "stack_name"]}},
        },
    )


def _outputs(heat, stack_id):
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def _remote_status(remote, name, stack_id):
    response = requests.get(
        "%s/stacks/%s/%s" % (remote.endpoint(REMOTE_PROJECT), name, stack_id),
        timeout=30,
    )
    if response.status_code == 404:
        return None
    return response.json()["stack"]["stack_status"]


def test_remote_stack_lifecycle(local, remote):
    heat = local.client()
    stack_id = helpers.create(
        heat, "rs" + uuid.uuid4().hex[:6], _local_template(value="one")
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    outputs = _outputs(heat, stack_id)
    assert outputs["out"] == "one"
    remote_id = heat.resources.get(stack_id, "far").physical_resource_id
    name = outputs["name"]
    assert _remote_status(remote, name, remote_id) == "CREATE_COMPLETE"

    # Parameters change in place: same remote stack, new outputs.
    heat.stacks.update(stack_id, template=_local_template(value="two"))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    assert (
        heat.resources.get(stack_id, "far").physical_resource_id == remote_id
    )
    assert _outputs(heat, stack_id)["out"] == "two"
    assert _remote_status(remote, name, remote_id) == "UPDATE_COMPLETE"

    heat.actions.suspend(stack_id)
    helpers.wait_for_status(heat, stack_id, "SUSPEND_COMPLETE")
    assert _remote_status(remote, name, remote_id) == "SUSPEND_COMPLETE"
    heat.actions.resume(stack_id)
    helpers.wait_for_status(heat, stack_id, "RESUME_COMPLETE")
    assert _remote_status(remote, name, remote_id) == "RESUME_COMPLETE"
    heat.actions.check(stack_id)
    helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE")
    assert _remote_status(remote, name, remote_id) == "CHECK_COMPLETE"

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert _remote_status(remote, name, remote_id) in (None, "DELETE_COMPLETE")


def test_remote_failure_fails_the_resource(local, remote):
    heat = local.client()
    stack_id = helpers.create(
        heat,
        "rf" + uuid.uuid4().hex[:6],
        _local_template(value="x", fail=True),
    )
    with pytest.raises(AssertionError, match="CREATE_FAILED"):
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    resource = heat.resources.get(stack_id, "far")
    assert resource.resource_status == "CREATE_FAILED"
    assert "Test Resource failed v" in resource.resource_status_reason
    assert "CREATE_FAILED" in resource.resource_status_reason
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")


def test_a_template_the_remote_refuses_refuses_the_create(local):
    """The remote endpoint validates the template before the create is
    accepted (Heat's RemoteStack.validate): a 400 with Heat's message,
    and no stack is left."""
    heat = local.client()
    broken = helpers.template({"x": {"type": "No::Such::Type"}})
    tmpl = _local_template()
    tmpl["resources"]["far"]["properties"]["template"] = json.dumps(broken)
    name = "re" + uuid.uuid4().hex[:6]
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        helpers.create(heat, name, tmpl)
    assert str(refused.value).startswith(
        "ERROR: Failed validating stack template using Heat endpoint at "
        'region "None" due to "ERROR: '
    )
    assert "No::Such::Type" in str(refused.value)
    assert name not in [s.stack_name for s in heat.stacks.list()]


def test_the_remote_stack_gets_the_files_map(local, remote):
    """A template resource of the remote template is read from the files
    map of the local stack's create."""
    heat = local.client()
    inner = helpers.template(
        {"r": {"type": "OS::Heat::RandomString", "properties": {"length": 9}}},
        outputs={"v": {"value": {"get_attr": ["r", "value"]}}},
    )
    far = helpers.template(
        {"i": {"type": "inner.yaml"}},
        outputs={"out": {"value": {"get_attr": ["i", "v"]}}},
    )
    tmpl = _local_template()
    props = tmpl["resources"]["far"]["properties"]
    props["template"] = {"get_file": "far.yaml"}
    del props["parameters"]
    stack_id = heat.stacks.create(
        stack_name="rf" + uuid.uuid4().hex[:6],
        template=tmpl,
        files={"far.yaml": json.dumps(far), "inner.yaml": json.dumps(inner)},
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert len(_outputs(heat, stack_id)["out"]) == 9
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
