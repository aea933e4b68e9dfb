"""Stack snapshots against the test cloud, driven with the real
``openstack stack snapshot create|list|show|restore|delete``.

A snapshot makes an image of each server (checked in Glance with
openstacksdk); restore rebuilds the server from it in place while the
other resources keep their data; deleting the snapshot, or the stack,
deletes the image.
"""

import json

import pytest

from harness import cloud as cloud_mod
from harness import helpers, polling
from tests.functional import test_openstack_cli

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    pytest.mark.usefixtures("cloud_ledger_demo"),
]


def _osc(dep, *args):
    return test_openstack_cli._osc(dep, *args, project="demo")


def _snapshot_done(dep, stack, snapshot_id, timeout=180):
    seen = {}

    def done():
        seen["shown"] = shown = json.loads(
            _osc(
                dep,
                "stack",
                "snapshot",
                "show",
                stack,
                snapshot_id,
                "-f",
                "json",
            )
        )["snapshot"]  # the CLI prints Heat's {"snapshot": {...}}
        return shown if shown["status"] != "IN_PROGRESS" else None

    return polling.until(
        done, timeout, lambda: "snapshot done: %s" % seen.get("shown"), 0.5
    )


def test_snapshot_restore_and_delete_with_the_cli(
    cloud, heat_on_cloud, cloud_sdk
):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "secret": {
                "type": "OS::Heat::RandomString",
                "properties": {"length": 16},
            },
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "networks": [{"network": cloud.network}],
                },
            },
        },
        outputs={"secret": {"value": {"get_attr": ["secret", "value"]}}},
    )
    stack_id = heat.stacks.create(stack_name="snappy", template=tmpl)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    secret = cloud_mod.outputs(heat, stack_id)["secret"]

    made = json.loads(
        _osc(
            heat_on_cloud,
            "stack",
            "snapshot",
            "create",
            "snappy",
            "--name",
            "first",
            "-f",
            "json",
        )
    )
    # The CLI's columns: ID (capitals), name, action, status, ...
    made["id"] = made.pop("ID")
    assert made["name"] == "first" and made["action"] == "SNAPSHOT"
    assert made["status"] in ("IN_PROGRESS", "COMPLETE")
    shown = _snapshot_done(heat_on_cloud, "snappy", made["id"])
    assert shown["status"] == "COMPLETE", shown
    assert shown["status_reason"] == "Stack SNAPSHOT completed successfully"
    resources = shown["data"]["resources"]
    image_id = resources["server"]["resource_data"]["snapshot_image_id"]
    assert resources["secret"]["resource_data"]["value"] == secret
    image = cloud_sdk.image.get_image(image_id)
    assert image.status == "active"
    helpers.wait_for_status(heat, stack_id, "SNAPSHOT_COMPLETE")
    listed = json.loads(
        _osc(
            heat_on_cloud, "stack", "snapshot", "list", "snappy", "-f", "json"
        )
    )
    assert [(s["id"], s["status"]) for s in listed] == [
        (made["id"], "COMPLETE")
    ]

    # Restore: the server is rebuilt from its snapshot image (same
    # server), the random string keeps its value.
    _osc(heat_on_cloud, "stack", "snapshot", "restore", "snappy", made["id"])
    helpers.wait_for_status(heat, stack_id, "RESTORE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id) == ids
    server = cloud_sdk.compute.get_server(ids["server"])
    assert server.image.id == image_id
    assert server.status == "ACTIVE"
    assert cloud_mod.outputs(heat, stack_id)["secret"] == secret

    # A second snapshot is deleted with the stack; the first by hand.
    second = json.loads(
        _osc(
            heat_on_cloud,
            "stack",
            "snapshot",
            "create",
            "snappy",
            "-f",
            "json",
        )
    )
    second_image = _snapshot_done(heat_on_cloud, "snappy", second["ID"])[
        "data"
    ]["resources"]["server"]["resource_data"]["snapshot_image_id"]
    _osc(
        heat_on_cloud,
        "stack",
        "snapshot",
        "delete",
        "snappy",
        made["id"],
        "-y",
    )
    assert cloud_sdk.image.find_image(image_id) is None
    error = helpers.http_error(
        lambda: heat.stacks.snapshot_show(stack_id, made["id"])
    )
    assert error.code == 404
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert cloud_sdk.image.find_image(second_image) is None


def test_snapshot_refused_while_an_operation_runs(heat_on_cloud):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "slow": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "v", "wait_secs": 5},
            }
        }
    )
    stack_id = heat.stacks.create(stack_name="busy", template=tmpl)["stack"][
        "id"
    ]
    error = helpers.http_error(lambda: heat.stacks.snapshot(stack_id, "s"))
    assert error.code == 409
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert heat.stacks.snapshot_list(stack_id) == {"snapshots": []}
