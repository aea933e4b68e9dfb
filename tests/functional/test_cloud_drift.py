"""Property-level drift on the test cloud (issue 32 item 1): a stack of
a server, a network, subnet and port and a security group is changed
behind its back with openstacksdk (the server renamed and given
metadata, a rule added to the group, the port deleted, the router set
down); the report says so property by property, leaves the untouched
resources IN_SYNC and the template's flavor, image and external network
(named by name) undrifted, and ``openstack stack drift show`` prints the
same. Then the other types, each checked IN_SYNC first (what the cloud
filled in is no drift; the cloud requests of a detection measured) and
changed out of band: a server's networks, a security group rule, a
trunk's subports, a floating IP association, a router interface, an
extra route set; a Glance image; the Keystone project, role, group, user
and user role assignment, a key pair, a server group and a flavor (as
admin)."""

import collections
import glob
import json
import os

import pytest
import requests

from harness import cloud as cloud_mod
from harness import helpers, osc, polling

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    pytest.mark.usefixtures("cloud_ledger_admin"),
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


def _requests(cloud):
    """{service: ["METHOD /path"]} of the requests the cloud's API
    clients (openstacksdk: heat_lite's engine, the test's own
    connections; not the services' calls to each other) made so far."""
    found = {}
    for path in sorted(glob.glob(cloud.layout.path("log", "*-access.log"))):
        service = os.path.basename(path)[: -len("-access.log")]
        with open(path, errors="replace") as f:
            found[service] = [
                " ".join(parts[1].split()[:2])
                for parts in (line.split('"') for line in f)
                if len(parts) > 5 and parts[5].startswith("openstacksdk/")
            ]
    return found


def _kind(request):
    """A request without IDs and query values: ``GET /v2.0/ports/{id}``,
    ``GET /v2.0/ports?device_id``."""
    method, _, path = request.partition(" ")
    path, _, query = path.partition("?")
    words = [
        "{id}" if len(w) >= 32 or w.count("-") == 4 else w
        for w in path.split("/")
    ]
    keys = sorted(k.partition("=")[0] for k in query.split("&") if k)
    return "%s %s%s" % (
        method,
        "/".join(words),
        "?" + "&".join(keys) if keys else "",
    )


def _stack(cloud, heat, endpoint, name, template):
    """Create, check IN_SYNC, and measure a detection's cloud requests
    (a second one: the first warmed the engine's lookups, as a periodic
    detection finds them) -- at most 3 per resource."""
    stack_id = helpers.create(heat, name, template)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=240)
    url = "%s/stacks/%s/%s" % (endpoint, name, stack_id)
    for _ in range(2):
        before = _requests(cloud)
        drift = _detect(url)
        assert drift["drift_status"] == "IN_SYNC", drift
        assert {e["drift_status"] for e in drift["resources"]} == {"IN_SYNC"}
    made = collections.Counter(
        "%s %s" % (service, _kind(request))
        for service, requests_of in _requests(cloud).items()
        for request in requests_of[len(before.get(service, ())) :]
    )
    print(
        "\n%s: %d resources, %d cloud requests"
        % (name, len(drift["resources"]), sum(made.values()))
    )
    for kind, n in sorted(made.items()):
        print("  %3d %s" % (n, kind))
    assert sum(made.values()) <= 3 * len(drift["resources"]), made
    return cloud_mod.physical(heat, stack_id), url


def _given(value):
    """``value`` without the None entries of its maps (a stored list
    of maps holds every key of their schema)."""
    if isinstance(value, list):
        return [_given(v) for v in value]
    if isinstance(value, dict):
        return {k: _given(v) for k, v in value.items() if v is not None}
    return value


def _by_property(entry):
    return {
        p["name"]: (_given(p["expected"]), _given(p["actual"]))
        for p in entry["properties"]
    }


ROUTES = [
    {"destination": "10.99.0.0/24", "nexthop": "10.82.0.5"},
    {"destination": "10.98.0.0/24", "nexthop": "10.82.0.6"},
]


def _wiring(cloud):
    return {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {
                "network": {"get_resource": "net"},
                "cidr": "10.82.0.0/24",
            },
        },
        "router": {
            "type": "OS::Neutron::Router",
            "properties": {"external_gateway_info": {"network": "public"}},
        },
        "gate": {
            "type": "OS::Neutron::RouterInterface",
            "properties": {
                "router": {"get_resource": "router"},
                "subnet": {"get_resource": "subnet"},
            },
        },
        "routes": {
            "type": "OS::Neutron::ExtraRouteSet",
            "properties": {
                "router": {"get_resource": "router"},
                "routes": ROUTES,
            },
        },
        "sg": {"type": "OS::Neutron::SecurityGroup"},
        "rule": {
            "type": "OS::Neutron::SecurityGroupRule",
            "properties": {
                "security_group": {"get_resource": "sg"},
                "port_range_min": 443,
                "port_range_max": 443,
            },
        },
        "parent": {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": "net"}},
        },
        "sub": {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": "net"}},
        },
        "trunk": {
            "type": "OS::Neutron::Trunk",
            "properties": {
                "name": "tr",
                "port": {"get_resource": "parent"},
                "sub_ports": [
                    {
                        "port": {"get_resource": "sub"},
                        "segmentation_type": "vlan",
                        "segmentation_id": 101,
                    }
                ],
            },
        },
        "fport": {
            "type": "OS::Neutron::Port",
            "depends_on": ["subnet"],
            "properties": {"network": {"get_resource": "net"}},
        },
        "fip": {
            "type": "OS::Neutron::FloatingIP",
            "properties": {"floating_network": "public"},
        },
        "assoc": {
            "type": "OS::Neutron::FloatingIPAssociation",
            "depends_on": ["gate"],
            "properties": {
                "floatingip_id": {"get_resource": "fip"},
                "port_id": {"get_resource": "fport"},
            },
        },
        "server": {
            "type": "OS::Nova::Server",
            "properties": {
                "image": cloud.image,
                "flavor": cloud.flavor,
                "networks": [{"network": cloud.network}],
            },
        },
    }


def test_networks_rule_trunk_and_association(cloud, heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    ids, url = _stack(
        cloud,
        heat,
        heat_on_cloud.endpoint(),
        "wired",
        helpers.template(_wiring(cloud)),
    )
    net = cloud_sdk.network
    extra = cloud_sdk.compute.create_server_interface(
        ids["server"], net_id=ids["net"]
    )
    net.delete_security_group_rule(ids["rule"])
    net.delete_trunk_subports(ids["trunk"], [{"port_id": ids["sub"]}])
    net.update_trunk(ids["trunk"], name="tr2")
    net.update_ip(ids["fip"], port_id=None)
    router_id, _, subnet = ids["gate"].partition(":subnet_id=")
    # Both routes: Neutron keeps an interface a route's next hop needs.
    net.remove_extra_routes_from_router(
        router_id, {"router": {"routes": ROUTES}}
    )
    net.remove_interface_from_router(router_id, subnet_id=subnet)

    drift = _detect(url)
    assert drift["drift_status"] == "DRIFTED", drift
    found = {e["resource_name"]: e for e in drift["resources"]}
    changed = {
        n: e["drift_status"]
        for n, e in found.items()
        if e["drift_status"] != "IN_SYNC"
    }
    assert changed == {
        "server": "MODIFIED",
        "rule": "DELETED",
        "trunk": "MODIFIED",
        "assoc": "MODIFIED",
        "gate": "DELETED",
        "routes": "MODIFIED",
    }, drift
    routes = found["routes"]
    assert _by_property(routes) == {"routes": (ROUTES, [])}, routes
    expected, actual = _by_property(found["server"])["networks"]
    assert expected == [{"network": cloud.network}]
    assert actual[0] == {"network": cloud.network}, actual
    assert actual[1:] == [
        {
            "network": ids["net"],
            "port": extra.port_id,
            "fixed_ip": extra.fixed_ips[0]["ip_address"],
        }
    ], actual
    assert _by_property(found["trunk"]) == {
        "name": ("tr", "tr2"),
        "sub_ports": (
            [
                {
                    "port": ids["sub"],
                    "segmentation_type": "vlan",
                    "segmentation_id": 101,
                }
            ],
            [],
        ),
    }, found["trunk"]
    assert _by_property(found["assoc"]) == {"port_id": (ids["fport"], None)}, (
        found["assoc"]
    )


def test_image(cloud, heat_on_cloud, cloud_sdk, image_server):
    heat = heat_on_cloud.client()
    template = helpers.template(
        {
            "image": {
                "type": "OS::Glance::WebImage",
                "properties": {
                    "name": "drift-img",
                    "location": image_server,
                    "disk_format": "raw",
                    "container_format": "bare",
                    "min_ram": 64,
                    "tags": ["a", "b"],
                    "extra_properties": {"purpose": "test"},
                },
            }
        }
    )
    ids, url = _stack(
        cloud, heat, heat_on_cloud.endpoint(), "imaged", template
    )
    cloud_sdk.image.update_image(
        ids["image"], name="renamed", tags=["b"], purpose="other", extra="x"
    )
    cloud_sdk.image.deactivate_image(ids["image"])

    drift = _detect(url)
    (entry,) = drift["resources"]
    assert entry["drift_status"] == "MODIFIED", drift
    assert _by_property(entry) == {
        "name": ("drift-img", "renamed"),
        "tags": (["a", "b"], ["b"]),
        "extra_properties": ({"purpose": "test"}, {"purpose": "other"}),
        "active": (True, False),
    }, entry
    cloud_sdk.image.reactivate_image(ids["image"])


def test_keystone_types(cloud, heat_as_admin):
    admin = cloud.connect("admin")
    member = admin.identity.find_role("member").id
    demo = admin.identity.find_user("demo").id
    own = {
        "role": {"get_resource": "role"},
        "project": {"get_resource": "project"},
    }
    template = helpers.template(
        {
            "project": {
                "type": "OS::Keystone::Project",
                "properties": {
                    "description": "drift",
                    "enabled": True,
                    "tags": ["t"],
                },
            },
            "role": {
                "type": "OS::Keystone::Role",
                "properties": {"name": "drift-role"},
            },
            "group": {
                "type": "OS::Keystone::Group",
                "properties": {"name": "drift-group", "roles": [own]},
            },
            "user": {
                "type": "OS::Keystone::User",
                "properties": {
                    "name": "drift-user",
                    "password": "s3cret",
                    "email": "a@example.org",
                    "groups": [{"get_resource": "group"}],
                    "default_project": {"get_resource": "project"},
                    "roles": [
                        {
                            "role": "member",
                            "project": {"get_resource": "project"},
                        }
                    ],
                },
            },
            "grant": {
                "type": "OS::Keystone::UserRoleAssignment",
                "properties": {"user": "demo", "roles": [own]},
            },
        }
    )
    heat = heat_as_admin.client(project="admin")
    ids, url = _stack(
        cloud, heat, heat_as_admin.endpoint("admin"), "people", template
    )
    ident = admin.identity
    ident.update_role(ids["role"], name="drift-role2")
    ident.update_group(ids["group"], name="drift-group2")
    ident.update_user(ids["user"], email="b@example.org")
    ident.remove_user_from_group(ids["user"], ids["group"])
    ident.unassign_project_role_from_user(ids["project"], ids["user"], member)
    ident.assign_project_role_to_user(ids["project"], ids["user"], ids["role"])
    ident.unassign_project_role_from_user(ids["project"], demo, ids["role"])
    # Another grant of the user the assignment names is not its drift.
    ident.assign_project_role_to_user(ids["project"], demo, member)
    ident.update_project(
        ids["project"], description="changed", is_enabled=False
    )

    drift = _detect(url)
    found = {e["resource_name"]: e for e in drift["resources"]}
    assert {n: e["drift_status"] for n, e in found.items()} == {
        "project": "MODIFIED",
        "role": "MODIFIED",
        "group": "MODIFIED",
        "user": "MODIFIED",
        "grant": "MODIFIED",
    }, drift
    assert _by_property(found["project"]) == {
        "description": ("drift", "changed"),
        "enabled": (True, False),
    }, found["project"]
    assert _by_property(found["role"]) == {
        "name": ("drift-role", "drift-role2")
    }
    assert _by_property(found["group"]) == {
        "name": ("drift-group", "drift-group2")
    }
    user = _by_property(found["user"])
    assert sorted(user) == ["email", "groups", "roles"], user
    assert user["email"] == ("a@example.org", "b@example.org")
    assert user["groups"] == ([ids["group"]], [])
    assert user["roles"] == (
        [{"role": "member", "project": ids["project"]}],
        [{"role": ids["role"], "project": ids["project"]}],
    )
    assert _by_property(found["grant"]) == {
        "roles": ([{"role": ids["role"], "project": ids["project"]}], [])
    }, found["grant"]
    ident.unassign_project_role_from_user(ids["project"], demo, member)
    admin.close()


def test_key_pair_server_group_and_flavor(cloud, heat_as_admin):
    admin = cloud.connect("admin")
    demo_project = admin.identity.find_project("demo").id
    template = helpers.template(
        {
            "key": {
                "type": "OS::Nova::KeyPair",
                "properties": {"name": "drift-key"},
            },
            "group": {
                "type": "OS::Nova::ServerGroup",
                "properties": {
                    "name": "drift-group",
                    "policies": ["affinity"],
                },
            },
            "flavor": {
                "type": "OS::Nova::Flavor",
                "properties": {
                    "ram": 128,
                    "vcpus": 1,
                    "disk": 1,
                    "is_public": False,
                    "tenants": [demo_project],
                    "extra_specs": {"hw:cpu_policy": "shared"},
                },
            },
        }
    )
    heat = heat_as_admin.client(project="admin")
    ids, url = _stack(
        cloud, heat, heat_as_admin.endpoint("admin"), "novas", template
    )
    compute = admin.compute
    compute.delete_keypair(ids["key"])
    compute.delete_server_group(ids["group"])
    compute.update_flavor_extra_specs_property(
        ids["flavor"], "hw:cpu_policy", "dedicated"
    )
    compute.flavor_remove_tenant_access(ids["flavor"], demo_project)

    drift = _detect(url)
    found = {e["resource_name"]: e for e in drift["resources"]}
    assert {n: e["drift_status"] for n, e in found.items()} == {
        "key": "DELETED",
        "group": "DELETED",
        "flavor": "MODIFIED",
    }, drift
    assert _by_property(found["flavor"]) == {
        "extra_specs": (
            {"hw:cpu_policy": "shared"},
            {"hw:cpu_policy": "dedicated"},
        ),
        "tenants": ([demo_project], []),
    }, found["flavor"]
    admin.close()
