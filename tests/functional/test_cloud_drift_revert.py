"""Drift-aware previews and updates on the test cloud (issue 32 item 2).

A stack of a server, a security group, a port and a Glance image is
changed behind its back with openstacksdk (the server resized and
renamed, a rule added to the group, the port deleted, the image
renamed) and detected. The update preview then shows each drifted
property with action ``keep`` (a plain update) or ``revert``
(``revert_drift``), and the revert's kinds (the server and group
updated in place, the port re-created and the image replaced: Glance
cannot rename it in place). A plain update of an unrelated property
(the group's description) leaves every drift in place (checked in the
cloud) and says so in its events; a revert without a new detection is
refused (409, the report is stale); ``openstack stack update --existing
--revert-drift`` after one puts each back (checked in the cloud) and the
next detection is IN_SYNC.
"""

import json

import pytest
import requests

from harness import cloud as cloud_mod
from harness import helpers, osc
from tests.functional.test_cloud_drift import _detect

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    pytest.mark.usefixtures("cloud_ledger_admin"),
]


def _template(cloud, image_server, description="web"):
    return helpers.template(
        {
            "sg": {
                "type": "OS::Neutron::SecurityGroup",
                "properties": {
                    "description": description,
                    "rules": [
                        {
                            "protocol": "tcp",
                            "port_range_min": 22,
                            "port_range_max": 22,
                        }
                    ],
                },
            },
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {"network": cloud.network},
            },
            "image": {
                "type": "OS::Glance::WebImage",
                "properties": {
                    "name": "rd-img",
                    "location": image_server,
                    "disk_format": "raw",
                    "container_format": "bare",
                },
            },
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "name": "rd-vm",
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "networks": [{"network": cloud.network}],
                },
            },
        }
    )


def _preview(url, body):
    answer = requests.patch(url + "/preview", json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _kinds(preview):
    return {
        r["resource_name"]: kind
        for kind, items in preview["resource_changes"].items()
        for r in items
    }


def _drifts(preview):
    return {
        r["resource_name"]: r["drift"]
        for items in preview["resource_changes"].values()
        for r in items
        if "drift" in r
    }


def _actions(drift):
    return {p["name"]: p["action"] for p in drift["properties"]}


def _osc(heat_on_cloud, *args):
    """``openstack`` against the deployment (no auth), as JSON when
    ``-f json`` is asked."""
    done = osc.run(
        [
            "--os-auth-type",
            "none",
            "--os-endpoint",
            heat_on_cloud.endpoint(),
        ]
        + list(args)
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "json" in args else done.stdout


def _resize(conn, server_id, flavor):
    conn.compute.resize_server(server_id, conn.compute.find_flavor(flavor).id)
    cloud_mod.wait_server(conn, server_id, "VERIFY_RESIZE", timeout=120)
    conn.compute.confirm_server_resize(server_id)
    cloud_mod.wait_server(conn, server_id, "ACTIVE", timeout=120)


def _rules(conn, group_id):
    return sorted(
        r.port_range_min
        for r in conn.network.security_group_rules(
            security_group_id=group_id, direction="ingress"
        )
    )


def test_preview_plain_update_and_revert(
    cloud, heat_on_cloud, cloud_sdk, image_server
):
    heat = heat_on_cloud.client()
    stack_id = helpers.create(
        heat, "reverting", _template(cloud, image_server)
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=240)
    ids = cloud_mod.physical(heat, stack_id)
    url = "%s/stacks/reverting/%s" % (heat_on_cloud.endpoint(), stack_id)

    # Never detected: the preview says so and a revert is refused.
    preview = _preview(url, {"revert_drift": True})
    assert preview["drift"]["state"] == "NOT_DETECTED", preview["drift"]
    assert _drifts(preview) == {}
    refused = requests.patch(url, json={"revert_drift": True}, timeout=60)
    assert refused.status_code == 409, refused.text
    assert _detect(url)["drift_status"] == "IN_SYNC"

    _resize(cloud_sdk, ids["server"], "mc-small")
    cloud_sdk.compute.update_server(ids["server"], name="renamed-vm")
    cloud_sdk.network.create_security_group_rule(
        security_group_id=ids["sg"],
        direction="ingress",
        protocol="tcp",
        port_range_min=8080,
        port_range_max=8080,
    )
    cloud_sdk.network.delete_port(ids["port"])
    cloud_sdk.image.update_image(ids["image"], name="renamed-img")

    drift = _detect(url)
    assert drift["drift_status"] == "DRIFTED", drift
    assert {
        e["resource_name"]: e["drift_status"] for e in drift["resources"]
    } == {
        "server": "MODIFIED",
        "sg": "MODIFIED",
        "port": "DELETED",
        "image": "MODIFIED",
    }, drift

    # A preview of a plain update: every drift kept, nothing changes.
    plain = _preview(url, {})
    assert plain["drift"]["state"] == "CURRENT", plain["drift"]
    assert plain["drift"]["revert_drift"] is False
    assert set(_kinds(plain).values()) == {"unchanged"}, plain
    drifts = _drifts(plain)
    assert _actions(drifts["server"]) == {"flavor": "keep", "name": "keep"}
    assert _actions(drifts["sg"]) == {"rules": "keep"}
    assert _actions(drifts["image"]) == {"name": "keep"}
    assert drifts["port"] == {"status": "DELETED", "action": "keep"}
    server = {p["name"]: p for p in drifts["server"]["properties"]}
    assert (server["name"]["expected"], server["name"]["actual"]) == (
        "rd-vm",
        "renamed-vm",
    )

    # The same with revert_drift: each put back, the port re-created.
    reverting = _preview(url, {"revert_drift": True})
    assert reverting["drift"]["revert_drift"] is True
    # Glance cannot rename a WebImage in place (``name`` is not
    # update_allowed, as in Heat): a new image replaces it.
    assert _kinds(reverting) == {
        "server": "updated",
        "sg": "updated",
        "image": "replaced",
        "port": "replaced",
    }, reverting
    drifts = _drifts(reverting)
    assert _actions(drifts["server"]) == {
        "flavor": "revert",
        "name": "revert",
    }
    assert _actions(drifts["sg"]) == {"rules": "revert"}
    assert _actions(drifts["image"]) == {"name": "revert"}
    assert drifts["port"] == {"status": "DELETED", "action": "recreate"}

    # heatclient's dry run keeps its columns (the five kinds).
    shown = _osc(
        heat_on_cloud,
        "stack",
        "update",
        "--existing",
        "--dry-run",
        "--revert-drift",
        "-f",
        "json",
        "reverting",
    )
    assert sorted(shown) == [
        "added",
        "deleted",
        "replaced",
        "unchanged",
        "updated",
    ], shown
    assert "port" in str(shown["replaced"]), shown

    # A plain update of an unrelated property leaves the drift alone.
    described = _template(cloud, image_server, description="web2")
    plain = _preview(url, {"template": described})
    assert _kinds(plain)["sg"] == "updated"
    assert _actions(_drifts(plain)["sg"]) == {"rules": "keep"}
    heat.stacks.update(stack_id, template=described, existing=True)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=240)
    server = cloud_sdk.compute.get_server(ids["server"])
    assert (server.name, server.flavor.original_name) == (
        "renamed-vm",
        "mc-small",
    )
    assert _rules(cloud_sdk, ids["sg"]) == [22, 8080]
    assert cloud_sdk.network.get_security_group(ids["sg"]).description == (
        "web2"
    )
    assert cloud_sdk.network.find_port(ids["port"]) is None
    assert cloud_sdk.image.get_image(ids["image"]).name == "renamed-img"
    kept = {
        e.resource_name: e.resource_status_reason
        for e in heat.events.list(stack_id)
        if e.resource_status == "DRIFT_KEPT"
    }
    assert kept == {
        "server": "Drift of flavor, name left in place",
        "sg": "Drift of rules left in place",
        "image": "Drift of name left in place",
        "port": "Drift left in place: deleted outside the stack "
        "(revert_drift not set)",
    }, kept

    # The report predates that update: a revert needs a new detection.
    assert _preview(url, {})["drift"]["state"] == "STALE"
    refused = requests.patch(url, json={"revert_drift": True}, timeout=60)
    assert refused.status_code == 409, refused.text
    assert "detect drift again" in refused.json()["error"]["message"]
    assert _detect(url)["drift_status"] == "DRIFTED"

    _osc(
        heat_on_cloud,
        "stack",
        "update",
        "--existing",
        "--revert-drift",
        "reverting",
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=300)
    now = cloud_mod.physical(heat, stack_id)
    assert (now["server"], now["sg"]) == (ids["server"], ids["sg"])
    assert now["port"] != ids["port"] and now["image"] != ids["image"]
    assert cloud_sdk.network.get_port(now["port"]).network_id
    assert cloud_sdk.image.find_image(ids["image"]) is None
    server = cloud_sdk.compute.get_server(ids["server"])
    assert (server.status, server.name, server.flavor.original_name) == (
        "ACTIVE",
        "rd-vm",
        cloud.flavor,
    )
    assert _rules(cloud_sdk, ids["sg"]) == [22]
    assert cloud_sdk.image.get_image(now["image"]).name == "rd-img"
    drift = _detect(url)
    assert drift["drift_status"] == "IN_SYNC", drift
