"""Property-level drift on the test cloud (issue 32 item 1): a stack of
a server, a network, subnet and port and a security group is changed
behind its back with openstacksdk (the server renamed and given
metadata, a rule added to the group, the port deleted, the router set
down); the report says so property by property, leaves the untouched
resources IN_SYNC and the template's flavor, image and external network
(named by name) undrifted, and
``openstack stack drift show`` prints the same."""

import json

import pytest
import requests

from harness import cloud as cloud_mod
from harness import helpers, osc, polling

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    pytest.mark.usefixtures("cloud_ledger_demo"),
]


def _template(cloud):
    return helpers.template(
        {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": "dn"}},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "net"},
                    "cidr": "10.81.0.0/24",
                    "name": "ds",
                },
            },
            "router": {
                "type": "OS::Neutron::Router",
                "properties": {
                    "admin_state_up": True,
                    "external_gateway_info": {"network": "public"},
                },
            },
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_resource": "net"}},
            },
            "sg": {
                "type": "OS::Neutron::SecurityGroup",
                "properties": {
                    "description": "web",
                    "rules": [
                        {
                            "protocol": "tcp",
                            "port_range_min": 22,
                            "port_range_max": 22,
                        }
                    ],
                },
            },
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "name": "drift-vm",
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "metadata": {"role": "web"},
                    "security_groups": [{"get_resource": "sg"}],
                    "networks": [{"network": cloud.network}],
                },
            },
        }
    )


def _drift(url):
    def done():
        answer = requests.get(url + "/drift", timeout=60)
        assert answer.status_code == 200, answer.text
        drift = answer.json()["drift"]
        return drift["drift_status"] != "DETECTION_IN_PROGRESS" and drift

    return polling.until(done, 120, "drift detection")


def _detect(url):
    answer = requests.post(
        url + "/actions", json={"detect_drift": None}, timeout=60
    )
    assert answer.status_code == 202, answer.text
    return _drift(url)


def test_out_of_band_changes_are_reported(cloud, heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    stack_id = helpers.create(heat, "drifting", _template(cloud))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    url = "%s/stacks/drifting/%s" % (heat_on_cloud.endpoint(), stack_id)

    drift = _detect(url)
    assert drift["drift_status"] == "IN_SYNC", drift
    assert len(drift["resources"]) == 6, drift
    assert all(e["drift_status"] == "IN_SYNC" for e in drift["resources"]), (
        drift
    )

    cloud_sdk.compute.update_server(ids["server"], name="renamed")
    cloud_sdk.compute.set_server_metadata(ids["server"], owner="ops")
    cloud_sdk.network.create_security_group_rule(
        security_group_id=ids["sg"],
        direction="ingress",
        protocol="tcp",
        port_range_min=8080,
        port_range_max=8080,
    )
    cloud_sdk.network.delete_port(ids["port"])
    cloud_sdk.network.update_router(ids["router"], admin_state_up=False)

    drift = _detect(url)
    assert drift["drift_status"] == "DRIFTED", drift
    found = {e["resource_name"]: e for e in drift["resources"]}
    assert {n: e["drift_status"] for n, e in found.items()} == {
        "net": "IN_SYNC",
        "subnet": "IN_SYNC",
        "port": "DELETED",
        "router": "MODIFIED",
        "sg": "MODIFIED",
        "server": "MODIFIED",
    }, drift
    server = {p["name"]: p for p in found["server"]["properties"]}
    assert sorted(server) == ["metadata", "name"], server
    assert server["name"]["expected"] == "drift-vm"
    assert server["name"]["actual"] == "renamed"
    assert server["metadata"]["expected"] == {"role": "web"}
    assert server["metadata"]["actual"] == {"role": "web", "owner": "ops"}
    (rules,) = found["sg"]["properties"]
    assert rules["name"] == "rules"
    assert [r["port_range_min"] for r in rules["expected"]] == [22]
    assert sorted(
        (r["direction"], r.get("port_range_min")) for r in rules["actual"]
    ) == [("ingress", 22), ("ingress", 8080)], rules
    assert found["router"]["properties"] == [
        {"name": "admin_state_up", "expected": True, "actual": False}
    ]
    assert drift["counts"] == {
        "IN_SYNC": 2,
        "MODIFIED": 3,
        "DELETED": 1,
        "NOT_CHECKED": 0,
    }

    shown = osc.run(
        [
            "--os-auth-type",
            "none",
            "--os-endpoint",
            heat_on_cloud.endpoint(),
            "stack",
            "drift",
            "show",
            "--drifted",
            "-f",
            "json",
            "drifting",
        ]
    )
    assert shown.returncode == 0, shown.stderr
    rows = {
        (r["Resource"], r["Drift Status"], r["Property"])
        for r in json.loads(shown.stdout)
    }
    assert rows == {
        ("drifting", "DRIFTED", ""),
        ("port", "DELETED", ""),
        ("router", "MODIFIED", "admin_state_up"),
        ("sg", "MODIFIED", "rules"),
        ("server", "MODIFIED", "metadata"),
        ("server", "MODIFIED", "name"),
    }, shown.stdout
