"""OS::Heat::SoftwareDeployment: the token of its CFN_SIGNAL URL in
keystone mode, and the cancel of a deployment still waiting.

The engine gives the plugin where configs and deployments are kept (its
services); here they are dicts (the database functions they stand for
are tested in tests/unit/db).
"""

import pytest

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.resources import services, software_deployment

CONF = conf.CONF
STACK = {"id": "s1", "name": "st", "tenant": "p1"}


class Rows:
    """The few store functions the plugin calls, over a dict."""

    def __init__(self):
        self.rows = {}

    def _get(self, row_id, tenant):
        row = self.rows.get(row_id)
        if row is None or row["tenant"] != tenant:
            raise exception.NotFound(message=row_id)
        return dict(row)

    software_config_get = software_deployment_get = _get

    def _create(self, values):
        self.rows[values["id"]] = dict(values, output_values=None)

    software_config_create = software_deployment_create = _create

    def software_config_delete(self, row_id, tenant):
        self._get(row_id, tenant)
        del self.rows[row_id]

    software_deployment_delete = software_config_delete

    def software_deployment_update(self, row_id, tenant, values):
        self._get(row_id, tenant)
        self.rows[row_id].update(values)


@pytest.fixture
def rows():
    return Rows(), Rows()


def _deployment(rows, name="dep"):
    configs, deployments = rows
    props = software_deployment.SoftwareDeployment.validate_properties(
        {"server": "srv"}, "resources.%s.properties" % name
    )
    return software_deployment.SoftwareDeployment(
        name,
        "OS::Heat::SoftwareDeployment",
        props,
        stack=dict(STACK),
        services=services.Services(
            software_configs=configs, software_deployments=deployments
        ),
    )


def _signal_url(configs, plugin):
    deployment = plugin.deployments.rows[plugin.resource_id]
    inputs = configs.rows[deployment["config_id"]]["inputs"]
    return {i["name"]: i["value"] for i in inputs}["deploy_signal_id"]


@pytest.fixture
def keystone():
    CONF.set_override("auth_strategy", "keystone", group="api")
    yield
    CONF.clear_override("auth_strategy", group="api")


def test_keystone_mode_signal_url_carries_the_deployments_own_token(
    rows, keystone
):
    configs, _ = rows
    plugin, other = _deployment(rows), _deployment(rows, "other")
    plugin.handle_create()
    other.handle_create()
    url = _signal_url(configs, plugin)
    base, token = url.split("?token=")
    assert base.endswith("/v1/p1/stacks/st/s1/resources/dep/signal")
    assert token.startswith("hlwc-") and len(token) > 40
    assert plugin.signal_token_matches(token)
    assert not plugin.signal_token_matches(_signal_url(configs, other)[-10:])
    assert not plugin.signal_token_matches(
        _signal_url(configs, other).split("?token=")[1]
    )
    # The same URL for the deployment's next action.
    plugin.handle_update(plugin.properties, {})
    assert _signal_url(configs, plugin) == url
    # Gone with the deployment.
    plugin.check_delete_complete(plugin.handle_delete())
    assert not plugin.signal_token_matches(token)


def test_noauth_signal_url_has_no_token(rows):
    configs, _ = rows
    plugin = _deployment(rows)
    plugin.handle_create()
    assert "?" not in _signal_url(configs, plugin)
    assert not plugin.signal_token_matches("hlwc-anything")


def test_cancel_fails_a_waiting_deployment_only(rows):
    _, deployments = rows
    waiting, done = _deployment(rows), _deployment(rows, "done")
    waiting.handle_create()
    done.handle_create()
    deployments.rows[done.resource_id]["status"] = "COMPLETE"
    waiting.handle_create_cancel()
    done.handle_update_cancel()
    assert deployments.rows[waiting.resource_id]["status"] == "FAILED"
    assert (
        deployments.rows[waiting.resource_id]["status_reason"]
        == "Deployment cancelled."
    )
    assert deployments.rows[done.resource_id]["status"] == "COMPLETE"
    with pytest.raises(software_deployment.DeploymentFailed):
        waiting.check_create_complete(True)
