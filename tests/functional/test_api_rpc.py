"""The engine's public RPC API over RabbitMQ with no REST API in the loop,
and the notifications the engine emits, caught by a real oslo.messaging
notification listener.

The client runs in a subprocess that loads the deployment's own config
file, as another OpenStack service on the bus would.
"""

import json
import subprocess
import sys

import pytest

from harness import deployment as deployment_mod

EXTRA = """
[oslo_messaging_notifications]
driver = messagingv2
topics = heat_lite_notifications
"""

CLIENT = r"""
import json, sys, threading, time
from heat_lite.cmd import common
common.parse_args(["--config-file", sys.argv[1]])
import oslo_messaging as messaging
from heat_lite.common import context
from heat_lite.engine import rpcapi

CONF = common.CONF
received, lock = [], threading.Lock()


class Endpoint:
    def _got(self, priority, event_type, payload):
        with lock:
            received.append([priority, event_type, payload])

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self._got("INFO", event_type, payload)

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self._got("ERROR", event_type, payload)


transport = messaging.get_notification_transport(CONF)
listener = messaging.get_notification_listener(
    transport, [messaging.Target(topic="heat_lite_notifications")],
    [Endpoint()], executor="threading")
listener.start()
time.sleep(1)
api = rpcapi.EngineAPI(timeout=60)
ctxt = context.RequestContext(project_id="rpcproj", user_id="rpcuser")


def wait(ident, status):
    deadline = time.time() + 120
    while time.time() < deadline:
        stack = api.show_stack(ctxt, ident, resolve_outputs=False)
        if stack["stack_status"] == status:
            return stack
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            raise SystemExit("stack is %s" % stack["stack_status"])
        time.sleep(0.2)
    raise SystemExit("timeout waiting for %s" % status)


def tmpl(**resources):
    return {"heat_template_version": "2018-08-31", "resources": {
        k: {"type": "OS::Heat::TestResource", "properties": v}
        for k, v in resources.items()}}


result = {}
ident = api.create_stack(ctxt, "viarpc", tmpl(a={"value": "one"}), {}, {},
                         None, None, {"tags": ["t1"]})
wait(ident, "CREATE_COMPLETE")
api.update_stack(ctxt, ident, tmpl(a={"value": "two"}, b={}), {}, {}, None,
                 None, {})
wait(ident, "UPDATE_COMPLETE")
resources = api.list_stack_resources(ctxt, ident)
result["resources"] = sorted(r["resource_name"] for r in resources)
result["output_a"] = api.describe_stack_resource(
    ctxt, ident, "a")["attributes"]["output"]
api.delete_stack(ctxt, ident)
wait(ident, "DELETE_COMPLETE")
bad = api.create_stack(ctxt, "failing", tmpl(x={"fail": True}), {}, {},
                       None, None, {})
wait(bad, "CREATE_FAILED")
try:
    api.show_stack(ctxt, dict(ident, stack_id="nope"))
except Exception as exc:
    result["missing"] = type(exc).__name__
result["stack_id"] = ident["stack_id"]
expected = {"orchestration.stack.%s.%s" % p for p in (
    ("create", "start"), ("create", "end"), ("update", "start"),
    ("update", "end"), ("delete", "start"), ("delete", "end"),
    ("create", "error"))} | {"orchestration.resource.%s.%s" % p for p in (
    ("create", "start"), ("create", "end"), ("update", "start"),
    ("update", "end"), ("delete", "start"), ("delete", "end"),
    ("create", "error"))}
deadline = time.time() + 30
while time.time() < deadline:
    with lock:
        if expected <= {r[1] for r in received}:
            break
    time.sleep(0.2)
listener.stop()
listener.wait()
result["notifications"] = received
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    d = deployment_mod.Deployment(
        "postgresql", tmp_path_factory.mktemp("rpc"), extra_conf=EXTRA
    )
    d.start()
    yield d
    d.stop()


@pytest.fixture(scope="module")
def client_result(dep):
    """What the RPC client saw and received (it runs once)."""
    run = subprocess.run(
        [sys.executable, "-c", CLIENT, dep.config],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_engine_api_and_notifications_over_rabbitmq(client_result):
    result = client_result
    assert result["resources"] == ["a", "b"]
    assert result["output_a"] == "two"
    assert result["missing"] == "StackNotFound_Remote"
    by_type = {}
    for priority, event_type, payload in result["notifications"]:
        by_type.setdefault(event_type, []).append((priority, payload))
    stack_id = result["stack_id"]
    for action in ("create", "update", "delete"):
        for phase in ("start", "end"):
            mine = [
                p
                for pr, p in by_type.get(
                    "orchestration.stack.%s.%s" % (action, phase), []
                )
                if p["stack_id"] == stack_id
            ]
            assert mine, (action, phase, sorted(by_type))
    start = [
        p
        for pr, p in by_type["orchestration.stack.create.start"]
        if p["stack_id"] == stack_id
    ][0]
    assert start["state"] == "CREATE_IN_PROGRESS"
    assert start["tenant_id"] == "rpcproj" and start["user_id"] == "rpcuser"
    assert start["stack_name"] == "viarpc" and start["tags"] == ["t1"]
    assert (
        start["stack_identity"]
        == "arn:openstack:heat::rpcproj:stacks/viarpc/%s" % stack_id
    )
    assert set(start) >= {"create_at", "state_reason", "updated_at"}
    end = [
        p
        for pr, p in by_type["orchestration.stack.delete.end"]
        if p["stack_id"] == stack_id
    ][0]
    assert end["state"] == "DELETE_COMPLETE"
    errors = by_type["orchestration.stack.create.error"]
    assert errors[0][0] == "ERROR"
    assert errors[0][1]["stack_name"] == "failing"
    assert errors[0][1]["state"] == "CREATE_FAILED"
    assert "Test Resource failed" in errors[0][1]["state_reason"]


def test_resource_notifications(client_result):
    result = client_result
    stack_id = result["stack_id"]
    mine = {}
    for priority, event_type, payload in result["notifications"]:
        if (
            event_type.startswith("orchestration.resource.")
            and payload["stack_id"] == stack_id
        ):
            mine.setdefault(event_type, []).append((priority, payload))
    starts = mine["orchestration.resource.create.start"]
    # a is created with the stack, b by the update.
    assert sorted(p["resource_name"] for _pr, p in starts) == ["a", "b"]
    start = [p for _pr, p in starts if p["resource_name"] == "a"][0]
    assert start["state"] == "CREATE_IN_PROGRESS"
    assert start["resource_type"] == "OS::Heat::TestResource"
    assert start["tenant_id"] == "rpcproj" and start["stack_name"] == "viarpc"
    assert (
        start["stack_identity"]
        == "arn:openstack:heat::rpcproj:stacks/viarpc/%s" % stack_id
    )
    end = mine["orchestration.resource.create.end"][0][1]
    assert end["state"] == "CREATE_COMPLETE" and end["physical_resource_id"]
    updated = {
        p["resource_name"]
        for _pr, p in mine["orchestration.resource.update.end"]
    }
    assert updated == {"a"}
    deleted = {
        p["resource_name"]
        for _pr, p in mine["orchestration.resource.delete.end"]
    }
    assert deleted == {"a", "b"}
    errors = [
        (pr, p)
        for pr, _type, p in result["notifications"]
        if pr == "ERROR" and p.get("resource_name") == "x"
    ]
    assert errors and errors[0][1]["state"] == "CREATE_FAILED"
    assert "Test Resource failed" in errors[0][1]["state_reason"]
