"""``/software_deployments`` through python-heatclient: create, list
(by server), show, update, delete, a server's metadata, the errors Heat
gives, and which projects see a deployment."""

import uuid

import requests

from harness import helpers


def _project():
    return "sd" + uuid.uuid4().hex[:8]


def _config(heat, name, **kwargs):
    return heat.software_configs.create(
        name=name, group="script", config="#!/bin/sh\necho " + name, **kwargs
    )


def test_create_show_update_delete(deployment):
    heat = deployment.client(_project())
    config = _config(heat, "hello", inputs=[{"name": "who"}])
    made = heat.software_deployments.create(
        config_id=config.id,
        server_id="server-1",
        action="CREATE",
        status="IN_PROGRESS",
        status_reason="Deploy data available",
        input_values={"who": "world"},
    )
    uuid.UUID(made.id)
    shown = heat.software_deployments.get(made.id)
    assert (
        shown.config_id,
        shown.server_id,
        shown.action,
        shown.status,
        shown.status_reason,
        shown.input_values,
        shown.output_values,
    ) == (
        config.id,
        "server-1",
        "CREATE",
        "IN_PROGRESS",
        "Deploy data available",
        {"who": "world"},
        None,
    )
    assert shown.creation_time
    assert not hasattr(shown, "updated_time")
    updated = heat.software_deployments.update(
        made.id,
        status="COMPLETE",
        status_reason="Outputs received",
        output_values={"deploy_status_code": 0, "result": "done"},
    )
    # What the update leaves out is kept.
    assert (updated.action, updated.status, updated.input_values) == (
        "CREATE",
        "COMPLETE",
        {"who": "world"},
    )
    assert updated.output_values == {"deploy_status_code": 0, "result": "done"}
    assert updated.updated_time >= updated.creation_time
    assert heat.software_deployments.get(made.id).status == "COMPLETE"
    # Its config cannot be deleted while it is in use.
    error = helpers.http_error(lambda: heat.software_configs.delete(config.id))
    assert error.code == 400
    assert "referenced" in str(error)
    heat.software_deployments.delete(made.id)
    for call in (
        lambda: heat.software_deployments.get(made.id),
        lambda: heat.software_deployments.delete(made.id),
        lambda: heat.software_deployments.update(made.id, status="FAILED"),
    ):
        assert helpers.http_error(call).code == 404
    heat.software_configs.delete(config.id)


def test_list_and_metadata_by_server(deployment):
    heat = deployment.client(_project())
    # Metadata is ordered by config name, whatever the order of creation.
    second = _config(heat, "20-second", outputs=[{"name": "result"}])
    first = _config(heat, "10-first")
    made = [
        heat.software_deployments.create(config_id=c.id, server_id=s)
        for c, s in ((second, "a"), (first, "a"), (first, "b"))
    ]
    listed = heat.software_deployments.list()
    assert [d.id for d in listed] == [d.id for d in made]
    on_a = heat.software_deployments.list(server_id="a")
    assert [d.id for d in on_a] == [made[0].id, made[1].id]
    assert heat.software_deployments.list(server_id="nowhere") == []
    metadata = heat.software_deployments.metadata("a")
    assert [c["name"] for c in metadata] == ["10-first", "20-second"]
    assert metadata[1]["id"] == second.id
    assert metadata[1]["group"] == "script"
    assert metadata[1]["config"] == "#!/bin/sh\necho 20-second"
    assert metadata[1]["outputs"][0]["name"] == "result"
    assert "project" not in metadata[1]
    assert heat.software_deployments.metadata("nowhere") == []
    # A changed config moves the deployment in its server's metadata.
    heat.software_deployments.update(made[2].id, config_id=second.id)
    assert [c["id"] for c in heat.software_deployments.metadata("b")] == [
        second.id
    ]


def test_bad_input(deployment):
    project = _project()
    heat = deployment.client(project)
    config = _config(heat, "c")
    unknown = str(uuid.uuid4())
    error = helpers.http_error(
        lambda: heat.software_deployments.create(
            config_id=unknown, server_id="s"
        )
    )
    assert error.code == 400
    assert "Config with id %s not found" % unknown in str(error)
    bad = [
        {"server_id": "s"},
        {"config_id": config.id},
        {"config_id": config.id, "server_id": "s", "input_values": [1]},
        {"config_id": config.id, "server_id": "s", "action": 5},
        {
            "config_id": config.id,
            "server_id": "s",
            "stack_user_project_id": "p" * 65,
        },
    ]
    for body in bad:
        error = helpers.http_error(
            lambda body=body: heat.software_deployments.create(**body)
        )
        assert error.code == 400, body
    made = heat.software_deployments.create(config_id=config.id, server_id="s")
    for change in (
        {"config_id": unknown},
        {"output_values": "x"},
        {"status": ["COMPLETE"]},
    ):
        error = helpers.http_error(
            lambda change=change: heat.software_deployments.update(
                made.id, **change
            )
        )
        assert error.code == 400, change
    url = deployment.endpoint(project) + "/software_deployments"
    headers = {"X-Auth-User": "tester"}
    for data in ("[]", "not json"):
        answer = requests.post(
            url,
            data=data,
            headers=dict(headers, **{"Content-Type": "application/json"}),
            timeout=60,
        )
        assert answer.status_code == 400 and "error" in answer.json()
    large = requests.post(
        url,
        json={"config_id": config.id, "server_id": "s", "x": "y" * 2**21},
        headers=headers,
        timeout=60,
    )
    assert large.status_code == 413 and "error" in large.json()
    assert heat.software_deployments.get(made.id).config_id == config.id


def test_other_projects(deployment):
    owner, other, agent = _project(), _project(), _project()
    alice = deployment.client(owner)
    bob = deployment.client(other)
    config = _config(alice, "secret")
    made = alice.software_deployments.create(
        config_id=config.id, server_id="s", stack_user_project_id=agent
    )
    for call in (
        lambda: bob.software_deployments.get(made.id),
        lambda: bob.software_deployments.update(made.id, status="FAILED"),
        lambda: bob.software_deployments.delete(made.id),
    ):
        assert helpers.http_error(call).code == 404
    assert bob.software_deployments.list() == []
    assert bob.software_deployments.metadata("s") == []
    # Bob cannot deploy Alice's config.
    error = helpers.http_error(
        lambda: bob.software_deployments.create(
            config_id=config.id, server_id="s"
        )
    )
    assert error.code == 400
    # The stack user's project (the server agent's) sees and updates it.
    server_agent = deployment.client(agent)
    assert [d.id for d in server_agent.software_deployments.list()] == [
        made.id
    ]
    assert [
        c["id"] for c in server_agent.software_deployments.metadata("s")
    ] == [config.id]
    server_agent.software_deployments.update(made.id, status="COMPLETE")
    shown = alice.software_deployments.get(made.id)
    assert (shown.status, shown.config_id) == ("COMPLETE", config.id)
