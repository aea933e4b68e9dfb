"""keystone mode against the test cloud: a stack acts as its creator
through a Keystone trust (``heat_lite.engine.trusts``).

heat_lite runs as operators run it with Heat's ``deferred_auth_method =
trusts``: ``heat-lite-api`` behind keystonemiddleware and ``heat-lite-engine
--workers 2`` on PostgreSQL, with the cloud's ``heat`` service user as
trustee and no ``[openstack]`` cloud at all. The cloud's non-admin
``demo`` user creates stacks with its own token, which is then revoked:
whatever the engines do afterwards (the rest of the create, a takeover
after an engine is killed, the delete) can only be done with the trust.
Every check of the cloud goes through openstacksdk as admin.
"""

import json
import os
import signal
import subprocess
import uuid

import pytest
import requests
import sqlalchemy as sa
from heatclient import client as heat_client
from heatclient import exc as heat_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from keystoneauth1.identity import v3

from harness import cloud as cloud_mod
from harness import deployment as deployment_mod
from harness import helpers, polling
from heat_lite.resources import test_resource
from tools.minicloud import heat_lite as heat_lite_mod

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
]
ENCRYPTION_KEY = "trust-tests-encryption-key-0123456789abcdef"
_CONF = """
[DEFAULT]
debug = true
# The libraries that carry tokens and trusts log at DEBUG too: none of
# them may write one.
default_log_levels = {levels}
auth_encryption_key = {key}
{keystone}
[openstack]
region_name = RegionOne
poll_interval = 0.2
[engine]
graceful_shutdown_timeout = 1
"""
LOG_LEVELS = ",".join(
    ["keystoneauth=DEBUG", "openstack=DEBUG", "keystonemiddleware=DEBUG"]
    + ["%s=WARN" % quiet for quiet in ("urllib3", "oslo_messaging", "amqp")]
)
NESTED = {
    "heat_template_version": "2018-08-31",
    "resources": {"inner_net": {"type": "OS::Neutron::Net"}},
    "outputs": {"net": {"value": {"get_resource": "inner_net"}}},
}


@pytest.fixture(scope="module")
def keystone_heat(cloud, tmp_path_factory):
    """heat-lite-api + heat-lite-engine in keystone mode, trusts on."""
    dep = deployment_mod.Deployment(
        "postgresql",
        tmp_path_factory.mktemp("heat-trusts"),
        extra_conf=_conf(cloud.layout),
    )
    try:
        dep.start()
        yield dep
    finally:
        dep.stop()


def _conf(lay, trusts=True):
    return _CONF.format(
        key=ENCRYPTION_KEY,
        levels=LOG_LEVELS,
        keystone=heat_lite_mod.keystone_conf(
            lay.auth_url, lay.password, region=None, trusts=trusts
        ),
    )


@pytest.fixture(scope="module")
def admin_sdk(cloud):
    conn = cloud.connect("admin")
    yield conn
    conn.close()


class User:
    """A non-admin user of its own (role ``member`` on project ``demo``),
    with tokens of its own."""

    def __init__(self, cloud, dep, admin_sdk):
        self.layout = cloud.layout
        self.dep = dep
        ident = admin_sdk.identity
        project = ident.find_project("demo")
        self.name = "trustor-%s" % uuid.uuid4().hex[:8]
        made = ident.create_user(
            name=self.name,
            password=self.layout.password,
            domain_id="default",
            default_project_id=project.id,
        )
        ident.assign_project_role_to_user(
            project, made, ident.find_role("member")
        )
        self.id, self.project = made.id, project.id
        self.seen = []  # every API response body, to search for secrets

    def _auth(self):
        return v3.Password(**self.layout.auth(self.name, "demo"))

    def token(self):
        """A fresh token (a new login each time)."""
        return ks_session.Session(auth=self._auth()).get_token()

    def heat(self, token, dep=None):
        """python-heatclient with exactly ``token`` (no re-login), on
        ``dep`` (default: the module's heat_lite)."""
        endpoint = (dep or self.dep).endpoint(self.project)
        sess = ks_session.Session(auth=token_endpoint.Token(endpoint, token))
        return heat_client.Client(
            "1", session=sess, endpoint_override=endpoint
        )

    def get(self, path, token):
        response = requests.get(
            self.dep.endpoint(self.project) + path,
            headers={"X-Auth-Token": token},
            timeout=30,
        )
        self.seen.append(response.text)
        return response


@pytest.fixture
def trustor(cloud, keystone_heat, admin_sdk):
    """A fresh user; a test that fails half-way leaves nothing in the
    cloud (its stacks are deleted) for the next tests to trip on."""
    user = User(cloud, keystone_heat, admin_sdk)
    yield user
    heat = user.heat(user.token())
    for stack in heat.stacks.list():
        heat.stacks.delete(stack.id)
        helpers.wait_for_status(heat, stack.id, "DELETE_COMPLETE", timeout=120)
    admin_sdk.identity.delete_user(user.id)


def _revoke(admin_sdk, token):
    admin_sdk.session.delete(
        "/auth/tokens",
        endpoint_filter={"service_type": "identity", "interface": "public"},
        headers={"X-Subject-Token": token},
    )


def _trusts(admin_sdk, trustor):
    response = admin_sdk.session.get(
        "/OS-TRUST/trusts?trustor_user_id=%s" % trustor,
        endpoint_filter={"service_type": "identity", "interface": "public"},
    )
    return response.json()["trusts"]


def _stored_trusts(dep):
    """{stack id: stored trust_id} from heat_lite's database."""
    with open(dep.config) as f:
        url = next(
            line.split(" = ", 1)[1].strip()
            for line in f
            if line.startswith("connection = ")
        )
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id, trust_id FROM stack"))
            return dict(rows.fetchall())
    finally:
        engine.dispose()


def _template(cloud, gate_secs):
    """A gate that holds the create for ``gate_secs``, then a network, a
    subnet, a server on it and a nested stack with a network of its own."""
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "gate": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "v", "wait_secs": gate_secs},
            },
            "net": {"type": "OS::Neutron::Net", "depends_on": ["gate"]},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "net"},
                    "cidr": "10.77.0.0/24",
                },
            },
            "server": {
                "type": "OS::Nova::Server",
                "depends_on": ["subnet"],
                "properties": {
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "networks": [{"network": {"get_resource": "net"}}],
                },
            },
            "inner": {"type": "inner.yaml", "depends_on": ["gate"]},
        },
        "outputs": {"inner_net": {"value": {"get_attr": ["inner", "net"]}}},
    }


def _create(user, cloud, name, gate_secs):
    """Create as ``user`` with a token revoked right after the request
    was accepted; returns (stack id, the revoked token)."""
    token = user.token()
    heat = user.heat(token)
    stack_id = heat.stacks.create(
        stack_name=name,
        template=_template(cloud, gate_secs),
        files={"inner.yaml": json.dumps(NESTED)},
    )["stack"]["id"]
    return stack_id, token


def _check_owned(admin_sdk, user, heat, stack_id):
    """The server and both networks exist, made by ``user`` in its
    project; returns their IDs."""
    ids = cloud_mod.physical(heat, stack_id)
    inner_net = cloud_mod.outputs(heat, stack_id)["inner_net"]
    server = admin_sdk.compute.get_server(ids["server"])
    assert (server.project_id, server.user_id) == (user.project, user.id)
    for net_id in (ids["net"], inner_net):
        assert admin_sdk.network.get_network(net_id).project_id == user.project
    return ids["server"], [ids["net"], inner_net]


def _check_gone(admin_sdk, server_id, net_ids):
    cloud_mod.wait_gone(
        lambda: admin_sdk.compute.find_server(server_id, all_projects=True)
    )
    for net_id in net_ids:
        assert admin_sdk.network.find_network(net_id) is None


def _secrets_absent(dep, user, secrets):
    """No secret in any log of ``dep`` nor in any API answer seen."""
    texts = list(user.seen)
    for key in dep.procs:
        with open(os.path.join(dep.workdir, "%s.log" % key)) as f:
            texts.append(f.read())
    for secret in secrets:
        assert not any(secret in text for text in texts)


def _read_everything(user, stack_id, token):
    """Every read of the stack a client makes, for _secrets_absent."""
    for path in (
        "/stacks",
        "/stacks/%s" % stack_id,
        "/stacks/%s/resources?nested_depth=2" % stack_id,
        "/stacks/%s/events?nested_depth=2" % stack_id,
        "/stacks/%s/template" % stack_id,
        "/stacks/%s/environment" % stack_id,
        "/stacks/%s/resources/server" % stack_id,
    ):
        assert user.get("/" + path.lstrip("/"), token).status_code < 300


def test_resources_act_as_the_creator_after_its_token_is_revoked(
    cloud, keystone_heat, admin_sdk, trustor
):
    user = trustor
    stack_id, first = _create(user, cloud, "trusted", gate_secs=2)
    _revoke(admin_sdk, first)
    heat = user.heat(user.token())
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
    server_id, net_ids = _check_owned(admin_sdk, user, heat, stack_id)

    # One trust for the whole tree, from demo to heat, on demo's project;
    # the database holds it encrypted, the nested stack a copy of it.
    trusts = _trusts(admin_sdk, user.id)
    assert len(trusts) == 1
    trust = trusts[0]
    assert trust["project_id"] == user.project
    assert trust["impersonation"] is True
    stored = _stored_trusts(keystone_heat)
    assert len(set(stored.values())) == 1
    assert trust["id"] not in next(iter(stored.values()))

    last = user.token()
    _read_everything(user, stack_id, last)
    user.heat(last).stacks.delete(stack_id)
    helpers.wait_for_status(
        user.heat(last), stack_id, "DELETE_COMPLETE", timeout=120
    )
    _check_gone(admin_sdk, server_id, net_ids)
    assert _trusts(admin_sdk, user.id) == []
    assert set(_stored_trusts(keystone_heat).values()) == {None}
    _secrets_absent(keystone_heat, user, [trust["id"], first, last])


def test_admin_only_types_are_refused_before_the_cloud_is_asked(
    cloud, keystone_heat, admin_sdk, trustor
):
    """A non-admin gets Heat's 403 for OS::Nova::Flavor and the Keystone
    types: no stack, no trust, no flavor."""
    token = trustor.token()
    for rtype, props in (
        ("OS::Nova::Flavor", {"ram": 64, "vcpus": 1, "name": trustor.name}),
        ("OS::Keystone::Project", {"name": trustor.name}),
    ):
        response = requests.post(
            keystone_heat.endpoint(trustor.project) + "/stacks",
            headers={"X-Auth-Token": token},
            json={
                "stack_name": "forbidden",
                "template": helpers.template(
                    {"r": {"type": rtype, "properties": props}}
                ),
            },
            timeout=30,
        )
        assert response.status_code == 403
        error = response.json()["error"]
        assert error["type"] == "Forbidden"
        assert error["message"] == (
            "You are not authorized to use resource_types:%s."
            % ("OS::Nova::Flavor" if "Nova" in rtype else "OS::Keystone::*")
        )
    assert admin_sdk.compute.find_flavor(trustor.name) is None
    assert admin_sdk.identity.find_project(trustor.name) is None
    assert _trusts(admin_sdk, trustor.id) == []
    stacks = trustor.heat(token).stacks.list()
    assert all(s.stack_name != "forbidden" for s in stacks)


def test_a_failed_create_deleted_takes_its_trust_along(
    cloud, keystone_heat, admin_sdk, trustor
):
    token = trustor.token()
    heat = trustor.heat(token)
    # A value that needs a resource is checked when the server is
    # created (through the trust), so the stack is made and its create
    # fails (a parameter's value would be a 400 at the request, as Heat).
    tmpl = helpers.template(
        {
            "name": {"type": "OS::Heat::RandomString"},
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": {
                        "str_replace": {
                            "template": "no-such-image",
                            "params": {"@n@": {"get_resource": "name"}},
                        }
                    },
                    "flavor": cloud.flavor,
                    "networks": [{"network": cloud.network}],
                },
            },
        }
    )
    stack_id = heat.stacks.create(stack_name="doomed", template=tmpl)["stack"][
        "id"
    ]
    failed = helpers.wait_for_status(heat, stack_id, "CREATE_FAILED")
    assert "no-such-image" in failed.stack_status_reason
    assert len(_trusts(admin_sdk, trustor.id)) == 1
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert _trusts(admin_sdk, trustor.id) == []


def test_a_trust_keystone_refuses_fails_the_create_with_nothing_left(
    cloud, admin_sdk, trustor, tmp_path
):
    """trusts_delegated_roles names a role the user lacks: Heat's 400
    "Missing required credential", and no stack is made."""
    lay = cloud.layout
    dep = deployment_mod.Deployment(
        "sqlite",
        tmp_path,
        extra_conf=_conf(lay)
        + "\n[DEFAULT]\ntrusts_delegated_roles = admin\n",
    )
    dep.start()
    try:
        response = requests.post(
            dep.endpoint(trustor.project) + "/stacks",
            headers={"X-Auth-Token": trustor.token()},
            json={
                "stack_name": "untrusted",
                "template": helpers.template(
                    {"net": {"type": "OS::Neutron::Net"}}
                ),
            },
            timeout=30,
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"]["message"] == (
            "Missing required credential: roles ['admin']"
        )
        assert list(trustor.heat(trustor.token(), dep).stacks.list()) == []
        assert _trusts(admin_sdk, trustor.id) == []
    finally:
        dep.stop()


def _lock_holders(dep):
    with open(dep.config) as f:
        url = next(
            line.split(" = ", 1)[1].strip()
            for line in f
            if line.startswith("connection = ")
        )
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT DISTINCT s.pid FROM resource r JOIN service s "
                    "ON s.engine_id = r.engine_id "
                    "WHERE r.engine_id IS NOT NULL"
                )
            )
            return {row[0] for row in rows}
    finally:
        engine.dispose()


def test_takeover_after_kill_finishes_the_create_with_the_trust(
    cloud, keystone_heat, admin_sdk, trustor
):
    """The engine holding the gate dies (SIGKILL) with the creator's
    token already revoked: the engine that takes the stack over creates
    the networks and the server through the trust."""
    user = trustor
    stack_id, first = _create(user, cloud, "taken-over", gate_secs=4)
    _revoke(admin_sdk, first)
    polling.until(
        lambda: _lock_holders(keystone_heat), 30, "an engine at the gate"
    )
    victim = sorted(_lock_holders(keystone_heat))[0]
    assert victim in keystone_heat.engine_pids()
    os.kill(victim, signal.SIGKILL)

    heat = user.heat(user.token())
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
    server_id, net_ids = _check_owned(admin_sdk, user, heat, stack_id)
    assert any(
        "Engine went down during resource CREATE" in e.resource_status_reason
        for e in heat.events.list(stack_id)
    )
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=120)
    _check_gone(admin_sdk, server_id, net_ids)
    assert _trusts(admin_sdk, user.id) == []


@pytest.fixture
def far_heat(cloud, tmp_path):
    """A second heat_lite in keystone mode (no trusts: it makes nothing in
    the cloud), listed as the catalog's orchestration service for the
    test, then the catalog is pointed back where it was."""
    before = cloud.layout.orchestration_url
    dep = deployment_mod.Deployment(
        "sqlite", tmp_path, extra_conf=_conf(cloud.layout, trusts=False)
    )
    try:
        dep.start()
        cloud.register_orchestration(dep.url)
        yield dep
    finally:
        dep.stop()
        if before:
            cloud.register_orchestration(before)


FAR = {
    "heat_template_version": "2018-08-31",
    "parameters": {"length": {"type": "number"}},
    "resources": {
        "secret": {
            "type": "OS::Heat::RandomString",
            "properties": {"length": {"get_param": "length"}},
        }
    },
    "outputs": {"secret": {"value": {"get_attr": ["secret", "value"]}}},
}


def _remote_template(length):
    return helpers.template(
        {
            "gate": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "v", "wait_secs": 2},
            },
            "far": {
                "type": "OS::Heat::Stack",
                "depends_on": ["gate"],
                "properties": {
                    "template": json.dumps(FAR),
                    "parameters": {"length": length},
                    "context": {"region_name": "RegionOne"},
                },
            },
        },
        outputs={"far": {"value": {"get_attr": ["far", "outputs"]}}},
    )


def test_remote_stack_acts_through_the_trust_via_the_catalog(
    cloud, keystone_heat, far_heat, admin_sdk, trustor
):
    """OS::Heat::Stack finds the orchestration endpoint in the catalog of
    the stack's trust and creates, updates and deletes the remote stack
    as the creator, each time after the token of the request was revoked
    (no [remote_stack] credentials are configured)."""
    user = trustor
    token = user.token()
    stack_id = user.heat(token).stacks.create(
        stack_name="near", template=_remote_template(12)
    )["stack"]["id"]
    _revoke(admin_sdk, token)
    heat = user.heat(user.token())
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
    far_client = user.heat(user.token(), far_heat)
    (remote,) = far_client.stacks.list()
    assert remote.id == cloud_mod.physical(heat, stack_id)["far"]
    assert len(cloud_mod.outputs(heat, stack_id)["far"]["secret"]) == 12

    token = user.token()
    user.heat(token).stacks.update(stack_id, template=_remote_template(20))
    _revoke(admin_sdk, token)
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=120)
    assert len(cloud_mod.outputs(heat, stack_id)["far"]["secret"]) == 20

    token = user.token()
    user.heat(token).stacks.delete(stack_id)
    _revoke(admin_sdk, token)
    heat = user.heat(user.token())
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=120)
    assert list(far_client.stacks.list()) == []
    assert _trusts(admin_sdk, user.id) == []


@pytest.fixture
def self_in_catalog(cloud, keystone_heat):
    """The module's heat_lite listed as the catalog's orchestration
    service: its OS::Heat::Stack makes the remote stack in itself, as
    heat-tempest-plugin's remote stack tests do."""
    before = cloud.layout.orchestration_url
    cloud.register_orchestration(keystone_heat.url)
    try:
        yield keystone_heat
    finally:
        if before:
            cloud.register_orchestration(before)


def _self_remote_template(region="RegionOne", gate=None):
    """``gate``: the remote stack waits for a TestResource held by that
    hold file (the test removes it once it has revoked its token)."""
    resources = {
        "far": {
            "type": "OS::Heat::Stack",
            "properties": {
                "template": {"get_file": "far.yaml"},
                "parameters": {"length": 12},
                "context": {"region_name": region},
            },
        },
    }
    if gate:
        resources["gate"] = {
            "type": "OS::Heat::TestResource",
            "properties": {"value": "g", "hold": gate},
        }
        resources["far"]["depends_on"] = "gate"
    return helpers.template(
        resources,
        outputs={"far": {"value": {"get_attr": ["far", "outputs"]}}},
    )


SELF_FAR = {
    "heat_template_version": "2018-08-31",
    "parameters": {"length": {"type": "number"}},
    "resources": {
        "inner": {"type": "inner.yaml", "properties": {"length": 5}},
        "secret": {
            "type": "OS::Heat::RandomString",
            "properties": {"length": {"get_param": "length"}},
        },
    },
    "outputs": {
        "secret": {"value": {"get_attr": ["secret", "value"]}},
        "inner": {"value": {"get_attr": ["inner", "secret"]}},
    },
}


def _self_files(far=SELF_FAR):
    inner = dict(FAR, parameters={"length": {"type": "number"}})
    return {"far.yaml": json.dumps(far), "inner.yaml": json.dumps(inner)}


def test_remote_stack_in_the_same_heat_lite_borrows_the_trust(
    self_in_catalog, admin_sdk, trustor
):
    """heat_lite creating its remote stack in itself (the remote create
    comes with a trust-scoped token, from which Keystone makes no trust):
    the remote stack borrows the local stack's trust, so it is made,
    updated, suspended, resumed and deleted with the requests' tokens
    revoked, with the local files map; and deleting it leaves the trust
    to its owner, which deletes it last."""
    user = trustor
    token = user.token()
    # The remote create waits until the token is revoked: made with the
    # token still valid, it would make a trust of its own (a CI run did).
    hold = test_resource.hold_path(self_in_catalog.ledger, "revoked")
    open(hold, "w").close()
    try:
        stack_id = user.heat(token).stacks.create(
            stack_name="near",
            template=_self_remote_template(gate="revoked"),
            files=_self_files(),
        )["stack"]["id"]
        _revoke(admin_sdk, token)
    finally:
        os.remove(hold)
    heat = user.heat(user.token())
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
    far_id = cloud_mod.physical(heat, stack_id)["far"]
    outputs = cloud_mod.outputs(heat, stack_id)["far"]
    assert (len(outputs["secret"]), len(outputs["inner"])) == (12, 5)
    (trust,) = _trusts(admin_sdk, user.id)
    stored = _stored_trusts(self_in_catalog)
    assert stored[far_id].startswith("borrowed:")
    assert trust["id"] not in stored[far_id]  # encrypted there too

    for verb, status in (
        ("update", "UPDATE_COMPLETE"),
        ("suspend", "SUSPEND_COMPLETE"),
        ("resume", "RESUME_COMPLETE"),
    ):
        token = user.token()
        client = user.heat(token)
        if verb == "update":
            far = dict(SELF_FAR, resources=dict(SELF_FAR["resources"]))
            far["resources"]["more"] = {"type": "OS::Heat::RandomString"}
            client.stacks.update(
                stack_id,
                template=_self_remote_template(),
                files=_self_files(far),
            )
        else:
            getattr(client.actions, verb)(stack_id)
        _revoke(admin_sdk, token)
        helpers.wait_for_status(heat, stack_id, status, timeout=120)
        assert heat.stacks.get(far_id).stack_status == status
    assert "more" in cloud_mod.physical(heat, far_id)

    token = user.token()
    user.heat(token).stacks.delete(stack_id)
    _revoke(admin_sdk, token)
    heat = user.heat(user.token())
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=120)
    assert list(heat.stacks.list()) == []
    assert _trusts(admin_sdk, user.id) == []


def test_remote_stack_refuses_a_bad_region_or_template_at_create(
    self_in_catalog, trustor
):
    """Heat's 400s at create: no orchestration endpoint in the region,
    and a template the remote endpoint refuses (asked as the caller)."""
    heat = trustor.heat(trustor.token())
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        heat.stacks.create(
            stack_name="dark",
            template=_self_remote_template("DARKHOLE"),
            files=_self_files(),
        )
    assert str(refused.value) == (
        "ERROR: Cannot establish connection to Heat endpoint at region "
        '"DARKHOLE" due to "public endpoint for orchestration service in '
        'DARKHOLE region not found"'
    )
    bad = dict(SELF_FAR, resource=SELF_FAR["resources"])
    del bad["resources"]
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        heat.stacks.create(
            stack_name="bad",
            template=_self_remote_template(),
            files=_self_files(bad),
        )
    assert str(refused.value) == (
        "ERROR: Failed validating stack template using Heat endpoint at "
        'region "RegionOne" due to "ERROR: The template section is '
        'invalid: resource"'
    )
    assert list(heat.stacks.list()) == []


def test_a_handle_token_signals_its_handle_and_nothing_else(
    keystone_heat, trustor
):
    """keystone mode: the token a WaitConditionHandle hands an in-guest
    agent signals that handle (curl_cli as given works), is refused
    everywhere else, and stops working when the stack is deleted."""
    heat = trustor.heat(trustor.token())
    tmpl = helpers.template(
        {
            "handle": {"type": "OS::Heat::WaitConditionHandle"},
            "other": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {
                "type": "OS::Heat::WaitCondition",
                "properties": {
                    "handle": {"get_resource": "handle"},
                    "timeout": 120,
                },
            },
        },
        outputs={"data": {"value": {"get_attr": ["wait", "data"]}}},
    )
    stack_id = heat.stacks.create(stack_name="waiting", template=tmpl)[
        "stack"
    ]["id"]

    def attrs(name):
        return heat.resources.get(
            stack_id, name, with_attr=["token", "endpoint", "curl_cli"]
        ).attributes

    polling.until(
        lambda: attrs("handle").get("token") and attrs("other").get("token"),
        60,
        "tokens on the handles",
        0.2,
    )
    mine, other = attrs("handle"), attrs("other")
    assert mine["token"] != other["token"]

    def post(url, token, **body):
        return requests.post(
            url,
            headers={
                "X-Auth-Token": token,
                "Content-Type": "application/json",
            },
            json=body,
            timeout=30,
        )

    # Another handle's token, and the token anywhere but its signal URL.
    assert post(mine["endpoint"], other["token"]).status_code == 403
    assert (
        requests.get(
            keystone_heat.endpoint(trustor.project) + "/stacks/" + stack_id,
            headers={"X-Auth-Token": mine["token"]},
            timeout=30,
        ).status_code
        == 401
    )
    assert post(
        mine["endpoint"].replace("/handle/", "/wait/"), mine["token"]
    ).status_code in (401, 403)
    # The agent's way: the curl command line it was given.
    done = subprocess.run(
        mine["curl_cli"]
        + " --data-binary '"
        + json.dumps({"status": "SUCCESS", "data": "up", "id": "1"})
        + "'",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert " 200 " in done.stdout.splitlines()[0], done.stdout
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
    assert json.loads(cloud_mod.outputs(heat, stack_id)["data"]) == {"1": "up"}

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert post(mine["endpoint"], mine["token"]).status_code == 404


def test_a_deployment_signal_url_needs_no_token_and_only_works_for_it(
    keystone_heat, trustor
):
    """keystone mode: each software deployment's CFN_SIGNAL URL (Heat's
    is a pre-signed URL) is POSTed to as it is, with no token, as
    heat-config-notify does, and works for that deployment only; when
    the stack times out, the deployments still waiting are FAILED (Heat's
    create-cancel); after the delete the URL is refused. The deprecated
    OS::Heat::SoftwareDeployments name works."""
    heat = trustor.heat(trustor.token())
    server = str(uuid.uuid4())  # deployments need no real server
    tmpl = helpers.template(
        {
            "config": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {"config": "true"},
            },
            "deps": {
                "type": "OS::Heat::SoftwareDeployments",
                "properties": {
                    "config": {"get_resource": "config"},
                    "servers": {"0": server, "1": server, "2": server},
                },
            },
        }
    )
    stack_id = heat.stacks.create(
        stack_name="deploying", template=tmpl, timeout_mins=1
    )["stack"]["id"]

    def urls():
        return [
            {i["name"]: i["value"] for i in d["inputs"]}["deploy_signal_id"]
            for d in heat.software_deployments.metadata(server_id=server)
        ]

    polling.until(lambda: len(urls()) == 3, 60, "three deployments", 0.2)
    first, second, _third = urls()
    assert "?token=hlwc-" in first

    def post(url, **kwargs):
        return requests.post(
            url,
            data="{}",
            headers={"Content-Type": "application/json"},
            timeout=30,
            **kwargs,
        )

    base, token = first.split("?token=")
    wrong = second.split("?token=")[1]
    assert post(base).status_code == 401  # no token at all
    assert post(base + "?token=" + wrong).status_code == 403
    assert post(base + "?token=hlwc-guess").status_code == 403
    assert post(first).status_code == 200

    def statuses():
        return sorted(
            (d.status, d.status_reason)
            for d in heat.software_deployments.list(server_id=server)
        )

    polling.until(
        lambda: [s for s, _r in statuses()].count("COMPLETE") == 1,
        30,
        "the signalled deployment complete",
        0.2,
    )
    # The other two never signal: the stack times out after a minute.
    helpers.wait_for_status(heat, stack_id, "CREATE_FAILED", timeout=150)
    polling.until(
        lambda: (
            statuses()
            == [
                ("COMPLETE", "Outputs received"),
                ("FAILED", "Deployment cancelled."),
                ("FAILED", "Deployment cancelled."),
            ]
        ),
        30,
        "the waiting deployments failed",
        0.2,
    )
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=60)
    assert post(second).status_code in (403, 404)


def test_constraints_ask_the_cloud_as_the_requesting_user(
    cloud, keystone_heat, admin_sdk, trustor
):
    """neutron.network at validate and at create sees what the user sees:
    a network of the admin project is refused (heat's own service user
    could see it), the user's own and the shared one are accepted."""
    hidden = admin_sdk.network.create_network(
        name="hidden-%s" % trustor.name,
        project_id=admin_sdk.identity.find_project("admin").id,
    )
    user_sdk = cloud_mod.catalog.connect(cloud.layout, trustor.name, "demo")
    mine = user_sdk.network.create_network(name="mine-%s" % trustor.name)
    try:
        heat = trustor.heat(trustor.token())

        def tmpl(net):
            return helpers.template(
                {
                    "port": {
                        "type": "OS::Neutron::Port",
                        "properties": {"network": net},
                    }
                }
            )

        for refused in (hidden.id, "no-such-net"):
            error = helpers.http_error(
                lambda r=refused: heat.stacks.validate(template=tmpl(r))
            )
            assert error.code == 400
            assert '"%s" does not validate neutron.network' % refused in (
                str(error)
            )
        for accepted in (mine.id, cloud.network):
            assert "Parameters" in heat.stacks.validate(
                template=tmpl(accepted)
            )
        # At create (the trust's turn): the user's own network passes.
        stack_id = heat.stacks.create(
            stack_name="ported", template=tmpl(mine.id)
        )["stack"]["id"]
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
        heat.stacks.delete(stack_id)
        helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=120)
    finally:
        user_sdk.network.delete_network(mine)
        user_sdk.close()
        admin_sdk.network.delete_network(hidden)
