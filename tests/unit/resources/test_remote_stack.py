"""OS::Heat::Stack: how the remote session authenticates, and what the
schema refuses. (Its lifecycle runs against a real second heat_lite in
tests/functional/test_remote_stack.py.)"""

import pytest
from keystoneauth1 import noauth, token_endpoint
from keystoneauth1.identity import v3

from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.resources import remote_client, remote_stack

CONF = conf.CONF


@pytest.fixture(autouse=True)
def _reset():
    yield
    CONF.clear_override("auth_type", group="remote_stack")
    CONF.clear_override("endpoint_override", group="remote_stack")
    CONF.clear_override("token_auth_url", group="remote_stack")


def test_configured_auth_plugin_without_a_caller_token():
    CONF.set_override("auth_type", "none", group="remote_stack")
    assert isinstance(remote_client._auth(None), noauth.NoAuth)
    anonymous = context.RequestContext(project_id="p")
    assert isinstance(remote_client._auth(anonymous), noauth.NoAuth)


def test_the_callers_token_wins():
    CONF.set_override("auth_type", "none", group="remote_stack")
    CONF.set_override(
        "endpoint_override", "http://far/v1/p", group="remote_stack"
    )
    caller = context.RequestContext(project_id="p", auth_token="tok")
    auth = remote_client._auth(caller)
    assert isinstance(auth, token_endpoint.Token)
    assert auth.get_token(None) == "tok"
    # The as-is token still fills in endpoint_override's project.
    assert auth.get_project_id(None) == "p"
    CONF.set_override(
        "token_auth_url", "http://keystone/v3", group="remote_stack"
    )
    auth = remote_client._auth(caller)
    assert isinstance(auth, v3.Token)
    assert auth.auth_url == "http://keystone/v3"


def test_no_token_and_no_auth_type_is_a_clear_failure():
    with pytest.raises(remote_client.RemoteError, match="no caller token"):
        remote_client._auth(context.RequestContext(project_id="p"))


def test_the_engine_gives_the_plugin_the_callers_context():
    assert remote_stack.RemoteStack.needs_caller_token
    props = remote_stack.RemoteStack.validate_properties(
        {"template": "{}"}, "resources.r.properties"
    )
    plugin = remote_stack.RemoteStack("r", "OS::Heat::Stack", props)
    CONF.set_override(
        "endpoint_override",
        "http://far/v1/%(project_id)s",
        group="remote_stack",
    )
    plugin.services = plugin.services.for_action(
        "stack-id",
        request_context=context.RequestContext(
            project_id="p", auth_token="tok"
        ),
    )
    client = plugin._client()
    assert plugin._client() is client  # polls reuse its session
    assert client._api.session.auth.get_token(None) == "tok"


def test_credential_secret_needs_a_key_manager():
    with pytest.raises(
        exception.StackValidationFailed, match="credential_secret_id"
    ):
        remote_stack.RemoteStack.validate_properties(
            {"template": "{}", "context": {"credential_secret_id": "s"}},
            "resources.r.properties",
        )
    props = remote_stack.RemoteStack.validate_properties(
        {"template": "{}", "context": {"region_name": "two"}},
        "resources.r.properties",
    )
    assert props["context"]["insecure"] is False
    assert props["parameters"] == {}


def test_a_template_that_is_not_a_map_fails():
    props = remote_stack.RemoteStack.validate_properties(
        {"template": "- a list"}, "resources.r.properties"
    )
    plugin = remote_stack.RemoteStack("r", "OS::Heat::Stack", props)
    with pytest.raises(remote_stack.RemoteStackFailed, match="not a map"):
        plugin._template()


def test_ca_cert_is_written_once_and_insecure_wins():
    pem = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n"
    path = remote_client._verify({"ca_cert": pem})
    assert remote_client._verify({"ca_cert": pem}) == path
    with open(path) as f:
        assert f.read() == pem
    assert remote_client._verify({"ca_cert": pem, "insecure": True}) is False
    assert remote_client._verify({}) is None


def test_configured_sessions_are_shared_caller_sessions_are_not():
    CONF.set_override("auth_type", "none", group="remote_stack")
    remote_client._SESSIONS.clear()
    first = remote_client._session({}, None)
    assert remote_client._session({"region_name": "x"}, None) is first
    insecure = remote_client._session({"insecure": True}, None)
    assert insecure is not first and insecure.verify is False
    caller = context.RequestContext(project_id="p", auth_token="tok")
    assert remote_client._session({}, caller) is not first
    remote_client._SESSIONS.clear()


def test_the_stacks_trust_session_comes_first():
    """With a trust session, it is used (and a token refused is not
    blamed on the caller); a CA choice makes a session with its auth."""
    from keystoneauth1 import session as ks_session

    from heat_lite.common import context
    from heat_lite.resources import remote_client

    trusted = ks_session.Session()
    caller = context.RequestContext(
        auth_token="tok", project_id="p", overwrite=False
    )
    assert remote_client._session({}, caller, trusted) is trusted
    other = remote_client._session({"insecure": True}, caller, trusted)
    assert other is not trusted
    assert other.auth is trusted.auth and other.verify is False
    heat = remote_client.RemoteHeat({}, caller, trusted=trusted)
    assert heat._as_caller is False
