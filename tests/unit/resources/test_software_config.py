"""OS::Heat::SoftwareConfig: schema defaults, stored config, replacement."""

import uuid

import pytest

from heat_lite.common import exception
from heat_lite.resources import services
from heat_lite.resources import software_config as sc

PATH = "resources.c.properties"
STACK = {
    "name": "st",
    "id": "sid",
    "record_uuid": "0123456789abcdef",
    "tenant": "p1",
}


class FakeStore:
    """The software_config table as a dict keyed by (tenant, id)."""

    def __init__(self):
        self.rows = {}

    def software_config_create(self, values):
        self.rows[(values["tenant"], values["id"])] = dict(values)

    def software_config_get(self, config_id, tenant):
        try:
            return dict(self.rows[(tenant, config_id)])
        except KeyError:
            raise exception.EntityNotFound(
                entity="Software Config", name=config_id
            ) from None

    def software_config_delete(self, config_id, tenant):
        self.software_config_get(config_id, tenant)
        del self.rows[(tenant, config_id)]


@pytest.fixture
def store():
    return FakeStore()


@pytest.fixture
def configs(store):
    """The services a plugin is given, with the fake store."""
    return services.Services(software_configs=store)


def _props(**values):
    return sc.SoftwareConfig.validate_properties(values, PATH)


def test_create_stores_the_config_with_defaults(configs):
    props = _props(
        config="#!/bin/sh\necho hi",
        options={"a": 1},
        inputs=[{"name": "x", "default": [1]}],
        outputs=[{"name": "y"}],
    )
    plugin = sc.SoftwareConfig(
        "c", "OS::Heat::SoftwareConfig", props, stack=STACK, services=configs
    )
    plugin.handle_create()
    uuid.UUID(plugin.resource_id)
    assert plugin.get_reference_id() == plugin.resource_id
    assert plugin.software_config() == {
        "id": plugin.resource_id,
        "tenant": "p1",
        "name": "st-c-0123456789ab",
        "group": "Heat::Ungrouped",
        "config": "#!/bin/sh\necho hi",
        "options": {"a": 1},
        "inputs": [
            {
                "name": "x",
                "description": None,
                "type": "String",
                "default": [1],
                "replace_on_change": False,
            }
        ],
        "outputs": [
            {
                "name": "y",
                "description": None,
                "type": "String",
                "error_output": False,
            }
        ],
    }
    assert plugin.get_attribute("config") == "#!/bin/sh\necho hi"


def test_empty_config_and_attribute_before_create(configs):
    plugin = sc.SoftwareConfig(
        "c",
        "OS::Heat::SoftwareConfig",
        _props(),
        stack=STACK,
        services=configs,
    )
    assert plugin.get_attribute("config") is None
    plugin.handle_create()
    assert plugin.software_config()["inputs"] == []
    assert plugin.get_attribute("config") is None


def test_delete_removes_the_row_and_tolerates_its_absence(store, configs):
    plugin = sc.SoftwareConfig(
        "c",
        "OS::Heat::SoftwareConfig",
        _props(config="a"),
        stack=STACK,
        services=configs,
    )
    plugin.handle_create()
    assert list(store.rows) == [("p1", plugin.resource_id)]
    plugin.handle_delete()
    assert store.rows == {}
    assert plugin.get_attribute("config") is None
    plugin.handle_delete()


def test_every_change_replaces(configs):
    plugin = sc.SoftwareConfig(
        "c",
        "OS::Heat::SoftwareConfig",
        _props(config="a"),
        stack=STACK,
        services=configs,
    )
    for key in sc.SoftwareConfig.properties_schema:
        assert plugin.needs_replace(_props(config="b"), {key})


@pytest.mark.parametrize(
    "values, message",
    [
        ({"inputs": [{"type": "String"}]}, "name not assigned"),
        ({"inputs": [{"name": "a", "type": "Text"}]}, "not an allowed value"),
        (
            {"outputs": [{"name": "a", "error_output": "maybe"}]},
            "not a valid boolean",
        ),
        ({"options": "x"}, "not a map"),
    ],
)
def test_io_schema(values, message):
    with pytest.raises(exception.StackValidationFailed) as err:
        _props(**values)
    assert message in str(err.value)
