"""``/software_configs`` through python-heatclient: create, list with
limit and marker, show, delete, and the errors Heat gives."""

import uuid

from harness import helpers

SCRIPT = "#!/bin/sh\necho hello"


def _client(deployment):
    # A project of its own, so the lists hold only this test's configs.
    return deployment.client("sc" + uuid.uuid4().hex[:8])


def test_create_show_delete(deployment):
    heat = _client(deployment)
    config = heat.software_configs.create(
        name="hello",
        group="script",
        config=SCRIPT,
        inputs=[{"name": "who"}],
        outputs=[{"name": "result"}],
        options={"debug": True},
    )
    uuid.UUID(config.id)
    shown = heat.software_configs.get(config.id)
    assert (shown.name, shown.group, shown.config, shown.options) == (
        "hello",
        "script",
        SCRIPT,
        {"debug": True},
    )
    assert shown.inputs == [
        {
            "name": "who",
            "description": None,
            "type": "String",
            "default": None,
            "replace_on_change": False,
        }
    ]
    assert shown.outputs[0]["error_output"] is False
    assert shown.creation_time
    heat.software_configs.delete(config.id)
    assert (
        helpers.http_error(lambda: heat.software_configs.get(config.id)).code
        == 404
    )
    assert (
        helpers.http_error(
            lambda: heat.software_configs.delete(config.id)
        ).code
        == 404
    )


def test_defaults_and_bad_shapes(deployment):
    heat = _client(deployment)
    config = heat.software_configs.create(name="empty")
    shown = heat.software_configs.get(config.id)
    assert (shown.group, shown.inputs, shown.outputs, shown.options) == (
        "Heat::Ungrouped",
        [],
        [],
        {},
    )
    error = helpers.http_error(
        lambda: heat.software_configs.create(
            name="bad", inputs=[{"type": "String"}]
        )
    )
    assert error.code == 400
    assert "name" in str(error)
    error = helpers.http_error(
        lambda: heat.software_configs.create(
            name="bad", outputs=[{"name": "x", "type": "Text"}]
        )
    )
    assert error.code == 400


def test_list_pages_oldest_first(deployment):
    heat = _client(deployment)
    ids = [
        heat.software_configs.create(name="c%d" % i, config=str(i)).id
        for i in range(5)
    ]
    listed = heat.software_configs.list()
    assert [c.id for c in listed] == ids
    assert {c.name for c in listed} == {"c0", "c1", "c2", "c3", "c4"}
    assert not hasattr(listed[0], "config")
    page = heat.software_configs.list(limit=2)
    assert [c.id for c in page] == ids[:2]
    page = heat.software_configs.list(limit=2, marker=ids[1])
    assert [c.id for c in page] == ids[2:4]
    assert heat.software_configs.list(marker=ids[4]) == []
    assert (
        helpers.http_error(
            lambda: heat.software_configs.list(marker=str(uuid.uuid4()))
        ).code
        == 400
    )
