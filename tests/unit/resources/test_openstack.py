"""The OpenStack types' schemas, request building and identity choice.

Everything that talks to a cloud runs against the real test cloud in
tests/functional/test_cloud_server.py; this covers what needs none.
"""

import json
import socket
import threading
import time

import pytest
from keystoneauth1 import session as keystone_session
from openstack import exceptions as sdk_exc

from harness import polling
from heat_lite import conf
from heat_lite.common import exception
from heat_lite.resources import base, registry, services
from heat_lite.resources.openstack import (
    client,
    cloud_constraints,
    keystone,
    neutron,
    neutron_floating_ip,
    neutron_port,
    neutron_router,
    neutron_security_group,
    neutron_subnet,
    nova,
    server_networks,
)

CONF = conf.CONF
PATH = "resources.r.properties"


class _Trusts:
    """``services.Identity`` of a test: a stack dict's ``trust``, logged
    in with ``session_for`` (the engine's are ``engine.trusts``)."""

    def __init__(self, session_for=None):
        self.session_for = session_for

    @staticmethod
    def trust_id(stack):
        return stack.get("trust")

    def trusted_session(self, trust_id):
        return self.session_for(trust_id)


def _trusting(session_for=None):
    return services.Services(identity=_Trusts(session_for))


@pytest.fixture(autouse=True)
def _reset():
    client.reset()
    yield
    client.reset()
    for name in ("cloud", "clouds_yaml", "auth_type"):
        CONF.clear_override(name, group="openstack")
    CONF.clear_override("auth_strategy", group="api")


def _server(**props):
    props.setdefault("flavor", "f")
    values = nova.Server.validate_properties(props, PATH)
    return nova.Server(
        "r",
        "OS::Nova::Server",
        values,
        stack={"name": "s", "id": "i", "record_uuid": "0123456789abcdef"},
    )


def test_types_are_registered():
    types = registry.load()
    for name in (
        "OS::Neutron::Port",
        "OS::Glance::WebImage",
        "OS::Keystone::Project",
        "OS::Keystone::User",
        "OS::Keystone::UserRoleAssignment",
        "OS::Nova::Flavor",
        "OS::Nova::KeyPair",
        "OS::Nova::ServerGroup",
        "OS::Neutron::Router",
        "OS::Neutron::RouterInterface",
        "OS::Neutron::FloatingIP",
        "OS::Neutron::FloatingIPAssociation",
        "OS::Neutron::SecurityGroup",
        "OS::Neutron::SecurityGroupRule",
        "OS::Neutron::Net",
        "OS::Neutron::Subnet",
        "OS::Nova::Server",
    ):
        assert name in types


def test_value_specs_may_not_override_properties():
    with pytest.raises(exception.StackValidationFailed) as err:
        neutron.Net.validate_properties(
            {"value_specs": {"shared": True, "name": "x", "mtu": 1400}}, PATH
        )
    assert "name, shared not allowed in value_specs" in str(err.value)


def test_subnet_needs_a_network_and_a_cidr_or_pool():
    with pytest.raises(exception.StackValidationFailed) as err:
        neutron_subnet.Subnet.validate_properties(
            {"cidr": "10.0.0.0/24"}, PATH
        )
    assert 'Property "network" not assigned' in str(err.value)
    with pytest.raises(exception.StackValidationFailed) as err:
        neutron_subnet.Subnet.validate_properties({"network": "n"}, PATH)
    assert "cidr, subnetpool" in str(err.value)
    # A network from another resource is checked once it is resolved.
    neutron_subnet.Subnet.validate_properties(
        {"cidr": "10.0.0.0/24"}, PATH, unresolved=("network",)
    )


def test_net_body_renames_and_merges_value_specs():
    values = neutron.Net.validate_properties(
        {"tenant_id": "p1", "value_specs": {"mtu": 1400}}, PATH
    )
    net = neutron.Net(
        "r",
        "OS::Neutron::Net",
        values,
        stack={"name": "s", "record_uuid": "0123456789ab"},
    )
    body = net._prepare_create(values)
    assert body == {
        "name": "s-r-0123456789ab",
        "admin_state_up": True,
        "shared": False,
        "project_id": "p1",
        "mtu": 1400,
    }


def test_allocate_network_is_alone():
    with pytest.raises(exception.StackValidationFailed) as err:
        _server(networks=[{"allocate_network": "auto", "network": "n"}])
    assert "allocate_network" in str(err.value)


def test_nics_without_networks_ask_nova_for_auto():
    # No cloud is asked for these (conn None).
    assert server_networks.create_nics(None, None, "r", [], None) == "auto"
    none = _server(networks=[{"allocate_network": "none"}])
    nets = none.properties["networks"]
    assert server_networks.create_nics(None, nets, "r", [], None) == "none"


def test_a_network_entry_needs_a_target_and_no_fixed_ip_with_a_port():
    with pytest.raises(exception.StackValidationFailed) as err:
        _server(networks=[{"fixed_ip": "10.0.0.3"}])
    assert "should be set" in str(err.value)
    with pytest.raises(exception.StackValidationFailed) as err:
        _server(networks=[{"port": "p", "fixed_ip": "10.0.0.3"}])
    assert "networks/fixed_ip" in str(err.value)
    _server(networks=[{"subnet": "s", "fixed_ip": "10.0.0.3"}])


def test_metadata_values_are_strings_for_nova():
    assert nova.serialize_metadata({"a": "x", "n": 1, "l": [1]}) == {
        "a": "x",
        "n": "1",
        "l": "[1]",
    }


def test_first_address_takes_the_last_network_by_name():
    addresses = {
        "a-net": [{"addr": "10.0.0.5"}],
        "b-net": [{"addr": "10.1.0.7"}],
        "c-net": [],
    }
    assert nova.first_address(addresses) == "10.1.0.7"
    assert nova.first_address({}) == ""


def test_update_policies_decide_replace_or_in_place():
    server = _server()
    props = server.properties
    assert not server.needs_replace(props, {"name", "metadata", "tags"})
    # Heat's defaults: RESIZE, REBUILD, and REPLACE for user_data.
    assert not server.needs_replace(dict(props, image="i"), {"flavor"})
    assert not server.needs_replace(dict(props, image="i"), {"image"})
    assert server.needs_replace(props, {"user_data"})
    # No networks (Nova's auto) to a list of nics: a new server.
    assert server.needs_replace(
        dict(props, networks=[{"port": "p"}]), {"networks"}
    )
    nics = _server(networks=[{"network": "a"}])
    assert not nics.needs_replace(
        dict(nics.properties, networks=[{"network": "b"}]), {"networks"}
    )
    replace = dict(
        props,
        flavor_update_policy="REPLACE",
        image_update_policy="REPLACE",
        image="i",
    )
    assert server.needs_replace(replace, {"flavor"})
    assert server.needs_replace(replace, {"image"})
    for policy in ("IGNORE", "REBUILD"):
        assert not server.needs_replace(
            dict(props, user_data_update_policy=policy), {"user_data"}
        )


class _Server:
    def __init__(self, status, fault=None):
        self.status = status
        self.fault = fault


def test_error_status_carries_novas_fault():
    assert nova._active(_Server("ACTIVE"))
    assert not nova._active(_Server("BUILD"))
    with pytest.raises(client.ResourceInError) as err:
        nova._active(
            _Server("ERROR", {"message": "No valid host", "code": 500})
        )
    assert str(err.value) == (
        'Went to status ERROR due to "Message: No valid host, Code: 500"'
    )
    with pytest.raises(client.ResourceUnknownStatus):
        nova._active(_Server("PAUSED"))


def test_no_configured_cloud_says_what_to_set():
    with pytest.raises(client.CloudUnavailable) as err:
        client.connection()
    assert "[openstack] cloud" in str(err.value)


def test_unknown_clouds_yaml_entry(tmp_path):
    path = tmp_path / "clouds.yaml"
    path.write_text("clouds: {}\n")
    CONF.set_override("cloud", "nowhere", group="openstack")
    CONF.set_override("clouds_yaml", str(path), group="openstack")
    with pytest.raises(client.CloudUnavailable) as err:
        client.connection()
    assert "[openstack] cloud nowhere" in str(err.value)


def test_one_connection_per_identity(tmp_path):
    path = tmp_path / "clouds.yaml"
    path.write_text(
        "clouds:\n  c:\n    auth_type: none\n"
        "    auth: {endpoint: 'http://127.0.0.1:9'}\n"
    )
    CONF.set_override("cloud", "c", group="openstack")
    CONF.set_override("clouds_yaml", str(path), group="openstack")
    assert client.connection() is client.connection()


def test_keystone_mode_refuses_a_stack_without_a_trust():
    CONF.set_override("auth_strategy", "keystone", group="api")
    with pytest.raises(client.CloudUnavailable) as err:
        client.connection()
    assert "trust" in str(err.value)
    net = neutron.Net(
        "r",
        "OS::Neutron::Net",
        {},
        stack={"id": "nowhere"},
        services=_trusting(),
    )
    with pytest.raises(client.CloudUnavailable):
        client.connection(net)


def test_keystone_mode_acts_through_the_stacks_trust():
    """One connection per trust, logged in by the trust's session; a
    deleted trust's connection is dropped."""
    CONF.set_override("auth_strategy", "keystone", group="api")
    sessions = []

    def session_for(trust):
        sessions.append(trust)
        return keystone_session.Session()

    trusting = _trusting(session_for)
    one = neutron.Net(
        "a", "OS::Neutron::Net", {}, stack={"trust": "t1"}, services=trusting
    )
    two = neutron.Net(
        "b", "OS::Neutron::Net", {}, stack={"trust": "t2"}, services=trusting
    )
    assert client.identity(one) == ("trust", "t1")
    assert client.connection(one) is client.connection(one)
    assert client.connection(one) is not client.connection(two)
    assert sessions == ["t1", "t2"]
    client.forget("t1")
    client.connection(one)
    assert sessions == ["t1", "t2", "t1"]


def test_sdk_not_found_is_a_deleted_resource():
    class Gone(neutron.Net):
        def _request(self, method, path, body=None):
            raise sdk_exc.NotFoundException("gone")

    net = Gone("r", "OS::Neutron::Net", {}, resource_id="x")
    cookie = net.handle_delete()
    assert not cookie
    assert net.check_delete_complete(cookie) is True


def test_port_needs_a_network():
    with pytest.raises(exception.StackValidationFailed) as err:
        neutron_port.Port.validate_properties({}, PATH)
    assert 'Property "network" not assigned' in str(err.value)
    values = neutron_port.Port.validate_properties(
        {"network": "n", "replacement_policy": "REPLACE_ALWAYS"}, PATH
    )
    port = neutron_port.Port("r", "OS::Neutron::Port", values)
    assert port.needs_replace(values, {"name"})


def test_security_group_rules_in_neutrons_form():
    with pytest.raises(exception.StackValidationFailed) as err:
        neutron_security_group.SecurityGroup.validate_properties(
            {"name": "default"}, PATH
        )
    assert 'cannot be assigned the name "default"' in str(err.value)
    cls = neutron_security_group.SecurityGroup
    values = cls.validate_properties(
        {
            "rules": [
                {"protocol": "tcp", "port_range_min": 22},
                {"remote_mode": "remote_group_id"},
            ]
        },
        PATH,
    )
    sg = cls("r", "OS::Neutron::SecurityGroup", values, resource_id="sg1")
    tcp, group = (sg._rule(r) for r in values["rules"])
    assert tcp == {
        "direction": "ingress",
        "ethertype": "IPv4",
        "protocol": "tcp",
        "port_range_min": 22,
        "security_group_id": "sg1",
    }
    # A remote group defaults to the group itself.
    assert group["remote_group_id"] == "sg1"
    assert "remote_ip_prefix" not in group


def test_router_interface_takes_a_subnet_or_a_port():
    cls = neutron_router.RouterInterface
    for props in (
        {"router": "r"},
        {"router": "r", "subnet": "s", "port": "p"},
    ):
        with pytest.raises(exception.StackValidationFailed) as err:
            cls.validate_properties(props, PATH)
        assert "Exactly one of the following properties" in str(err.value)
    cls.validate_properties({"router": "r"}, PATH, unresolved=("port",))


def test_router_refuses_l3_agents():
    with pytest.raises(exception.StackValidationFailed) as err:
        neutron_router.Router.validate_properties(
            {"l3_agent_ids": ["a"]}, PATH
        )
    assert "no L3 agents" in str(err.value)


def test_floating_ip_update_can_disassociate():
    cls = neutron_floating_ip.FloatingIP
    values = cls.validate_properties({"floating_network": "public"}, PATH)
    fip = cls("r", "OS::Neutron::FloatingIP", values, resource_id="f")
    assert fip._prepare_update(values, {"port_id"}) == {"port_id": None}


def test_cloud_constraints_accept_without_a_cloud():
    from heat_lite.engine.template import constraints as tc

    cloud_constraints.forget()
    check = tc.custom_checker("nova.flavor")
    assert check is not None
    assert check("anything")


def test_cloud_constraint_answers_are_cached(monkeypatch):
    cloud_constraints.forget()
    asked = []
    monkeypatch.setattr(
        cloud_constraints, "_exists", lambda *args: asked.append(args) or False
    )
    check = cloud_constraints.checker("glance.image")
    assert not check("img")
    assert not check("img")
    assert [a[1:] for a in asked] == [("image", "find_image", "img")]
    cloud_constraints.forget()


def test_keystone_mode_constraints_ask_as_the_caller_cached_per_project(
    monkeypatch,
):
    """Without a token or trust nothing is asked; with one, the answer is
    asked once per project and shared by its callers and its trusts."""
    from heat_lite.common import context

    CONF.set_override("auth_strategy", "keystone", group="api")
    trusting = _trusting(lambda trust: keystone_session.Session())
    cloud_constraints.forget()
    asked = []
    monkeypatch.setattr(
        cloud_constraints,
        "_exists",
        lambda acting, *args: asked.append(acting.project()) or False,
    )
    check = cloud_constraints.checker("neutron.network")
    assert check("n")
    assert asked == []

    def caller(project):
        return context.RequestContext(
            auth_token="tok", project_id=project, overwrite=False
        )

    with client.acting_as(request=caller("p1")):
        assert not check("n")
        assert not check("n")
    with client.acting_as(request=caller("p2")):
        assert not check("n")
    with client.acting_as(
        stack={"trust": "t1", "tenant": "p1"}, services=trusting
    ):
        assert not check("n")
    assert asked == [("project", "p1"), ("project", "p2")]
    cloud_constraints.forget()


def test_cloud_constraints_accept_what_the_cloud_cannot_answer(monkeypatch):
    from heat_lite.common import context

    CONF.set_override("auth_strategy", "keystone", group="api")
    cloud_constraints.forget()
    ctxt = context.RequestContext(
        auth_token="tok", project_id="p", overwrite=False
    )
    # No [trustee] auth_url to re-scope the token at: not answerable.
    with client.acting_as(request=ctxt):
        assert cloud_constraints.checker("nova.flavor")("f")
    assert cloud_constraints._CACHE == {}


def test_a_conflicting_delete_is_tried_again_until_the_deadline():
    answers = [sdk_exc.ConflictException("in use", http_status=409)] * 2

    class Busy(neutron.Net):
        def _request(self, method, path, body=None):
            if answers:
                raise answers.pop(0)
            if method == "GET":
                raise sdk_exc.NotFoundException("gone")

    net = Busy("r", "OS::Neutron::Net", {}, resource_id="x")
    cookie = net.handle_delete()
    assert cookie["pending"]
    with pytest.raises(base.PollDelay):
        net.check_delete_complete(cookie)
    assert net.check_delete_complete(cookie) is True
    # Past the deadline the conflict fails the delete.
    answers.append(sdk_exc.ConflictException("in use", http_status=409))
    cookie = {"until": 0, "wait": 0.5, "pending": True}
    with pytest.raises(sdk_exc.ConflictException):
        net.check_delete_complete(cookie)


def test_a_role_needs_a_project_or_a_domain():
    with pytest.raises(exception.StackValidationFailed) as err:
        keystone.User.validate_properties(
            {"roles": [{"role": "member"}]}, PATH
        )
    assert "Either project or domain must be specified for role member" in (
        str(err.value)
    )


def test_web_image_update_is_a_json_patch():
    from heat_lite.resources.openstack import glance

    ops = glance._patch_ops(
        {"extra_properties": {"a": "1", "b": "2"}},
        {
            "tags": ["x"],
            "os_distro": None,
            "extra_properties": {"b": "3", "c": 4},
        },
        {"tags", "os_distro", "extra_properties"},
    )
    assert ops == [
        {"op": "remove", "path": "/os_distro"},
        {"op": "replace", "path": "/tags", "value": ["x"]},
        {"op": "remove", "path": "/a"},
        {"op": "replace", "path": "/b", "value": "3"},
        {"op": "add", "path": "/c", "value": "4"},
    ]


def test_idle_trust_connections_age_out(monkeypatch):
    CONF.set_override("auth_strategy", "keystone", group="api")
    monkeypatch.setattr(client, "MAX_CONNECTIONS", 2)
    trusting = _trusting(lambda trust: keystone_session.Session())

    def net(trust):
        return neutron.Net(
            "n",
            "OS::Neutron::Net",
            {},
            stack={"trust": trust},
            services=trusting,
        )

    first = client.connection(net("t1"))
    client.connection(net("t2"))
    assert client.connection(net("t1")) is first  # t1 used last: t2 goes
    client.connection(net("t3"))
    assert client.connection(net("t1")) is first
    assert set(client._CONNECTIONS) == {("trust", "t1"), ("trust", "t3")}


#: The stand-in's keep-alive timeout (see ``keep_alive_nova``).
SERVER_IDLE = 0.5


@pytest.fixture
def keep_alive_nova(tmp_path):
    """A loopback compute endpoint speaking keep-alive HTTP/1.1 that, like
    a server whose keep-alive timeout strikes while a request is on its
    way, closes without an answer a connection on which a request comes
    after ``SERVER_IDLE`` seconds of quiet; answers the rest (version
    discovery, ``{"servers": []}``). heat_lite's ``[openstack]`` cloud
    points at it; yields the POST request lines it answered or dropped:
    [(line, answered)]."""
    listener = socket.create_server(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d" % listener.getsockname()[1]
    posts = []
    version = {
        "version": {
            "id": "v2.1",
            "status": "CURRENT",
            "version": "2.1",
            "min_version": "2.1",
            "links": [{"rel": "self", "href": url + "/v2.1/"}],
        }
    }

    def serve(conn):
        quiet_since = time.monotonic()
        with conn, conn.makefile("rb") as requests_in:
            while True:
                line = requests_in.readline().decode().strip()
                if not line:
                    return
                length = 0
                for header in iter(requests_in.readline, b"\r\n"):
                    name, _, value = header.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                requests_in.read(length)
                late = time.monotonic() - quiet_since > SERVER_IDLE
                if line.startswith("POST"):
                    posts.append((line, not late))
                if late:
                    return  # closed, nothing answered
                body = json.dumps(
                    version if line.startswith("GET") else {"servers": []}
                ).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                )
                quiet_since = time.monotonic()

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    path = tmp_path / "clouds.yaml"
    path.write_text(
        "clouds:\n  c:\n    auth_type: none\n"
        "    auth: {endpoint: '%s'}\n"
        "    compute_endpoint_override: '%s/v2.1'\n" % (url, url)
    )
    CONF.set_override("cloud", "c", group="openstack")
    CONF.set_override("clouds_yaml", str(path), group="openstack")
    yield posts
    listener.close()
    CONF.clear_override("connect_retries", group="openstack")


def _two_posts_apart(seconds):
    """Two POSTs on one connection of heat_lite's, ``seconds`` apart;
    the second's answer."""
    compute = client.connection().compute
    compute.post("/servers/x/action", json={})
    later = time.monotonic() + seconds
    polling.until(lambda: time.monotonic() > later, what="quiet")
    return compute.post("/servers/x/action", json={}).json()


ACTION = "POST /v2.1/servers/x/action HTTP/1.1"


def test_a_connection_idle_past_max_idle_is_not_used(
    keep_alive_nova, monkeypatch
):
    """A pooled connection idle longer than ``client.MAX_IDLE`` is opened
    anew: the server's keep-alive timeout never drops a write."""
    monkeypatch.setattr(client, "MAX_IDLE", SERVER_IDLE / 2)
    assert _two_posts_apart(SERVER_IDLE + 0.2) == {"servers": []}
    assert keep_alive_nova == [(ACTION, True), (ACTION, True)]


def test_without_max_idle_the_write_is_lost_not_sent_twice(
    keep_alive_nova, monkeypatch
):
    """What ``MAX_IDLE`` prevents (the stand-in can fail the test above),
    and ``connect_retries`` 0: the unanswered write is not sent again."""
    monkeypatch.setattr(client, "MAX_IDLE", 60)
    with pytest.raises(Exception, match="Connection aborted"):
        _two_posts_apart(SERVER_IDLE + 0.2)
    assert keep_alive_nova == [(ACTION, True), (ACTION, False)]


def test_connect_retries_sends_an_unanswered_request_again(
    keep_alive_nova, monkeypatch
):
    """``[openstack] connect_retries`` (Heat's client_retry_limit): for
    operators who prefer a write sent twice to a write failed."""
    monkeypatch.setattr(client, "MAX_IDLE", 60)
    CONF.set_override("connect_retries", 2, group="openstack")
    assert _two_posts_apart(SERVER_IDLE + 0.2) == {"servers": []}
    assert keep_alive_nova == [(ACTION, True), (ACTION, False), (ACTION, True)]


def test_a_security_group_rule_is_checked_as_heat_checks_it():
    cls = neutron_security_group.SecurityGroupRule
    props = cls.validate_properties({"security_group": "sg"}, "r")
    assert (props["protocol"], props["direction"], props["ethertype"]) == (
        "tcp",
        "ingress",
        "IPv4",
    )
    # A remote group by a function resolved later still conflicts.
    with pytest.raises(exception.StackValidationFailed, match="same time"):
        cls.validate_properties(
            {"security_group": "sg", "remote_ip_prefix": "10.0.0.0/8"},
            "r",
            unresolved=("remote_group",),
        )
    with pytest.raises(exception.StackValidationFailed, match="minimum port"):
        cls.validate_properties(
            {
                "security_group": "sg",
                "port_range_min": 90,
                "port_range_max": 80,
            },
            "r",
        )
    # An ICMP rule's range is a type and a code: no order.
    cls.validate_properties(
        {
            "security_group": "sg",
            "protocol": "icmp",
            "port_range_min": 8,
            "port_range_max": 0,
        },
        "r",
    )
