"""Apps over the real API (issue 29.1): /v1/{project}/apps create, list,
show, update, delete; the answers, Heat's JSON errors for every kind of
wrong body, the secret never answered, policy, and purge_deleted. On
SQLite (heat-lite-all, fake://) and PostgreSQL (API + engines over
RabbitMQ)."""

import json
import uuid

import pytest
import requests

from harness import deployment as deployment_mod
from tests.functional import test_osc_plugin as osc_plugin

SECRET = "a webhook secret of the app"
EXTRA = """
[DEFAULT]
auth_encryption_key = an encryption key of 32 chars...
"""
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"image": {"type": "string", "default": "none"}},
}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def dep(request, tmp_path_factory):
    yield from deployment_mod.running(
        request.param,
        tmp_path_factory.mktemp("apps-" + request.param),
        extra_conf=EXTRA,
    )


@pytest.fixture
def project():
    return "p" + uuid.uuid4().hex[:8]


def _api(dep, project, method, path="", body=None, roles=None):
    headers = {"X-Auth-User": "dev"}
    if roles:
        headers["X-Roles"] = roles
    return requests.request(
        method,
        dep.endpoint(project) + "/apps" + path,
        json=body,
        headers=headers,
        timeout=60,
    )


def _body(name="shop", **extra):
    body = {
        "name": name,
        "source": {"url": "file:///srv/git/shop", "branches": ["main"]},
        "builder": {"name": "artifact"},
        "template": TEMPLATE,
        "image_parameter": "image",
    }
    body.update(extra)
    return body


def test_create_list_show_update_delete(dep, project):
    made = _api(dep, project, "POST", body=_body(webhook_secret=SECRET))
    assert made.status_code == 201, made.text
    app = made.json()["app"]
    assert app["webhook"] is True and app["template"] == TEMPLATE
    assert SECRET not in made.text
    listed = _api(dep, project, "GET").json()["apps"]
    assert [a["name"] for a in listed] == ["shop"]
    for key in (app["id"], "shop"):
        shown = _api(dep, project, "GET", "/" + key)
        assert shown.status_code == 200 and shown.json()["app"] == app
        assert SECRET not in shown.text
    patched = _api(
        dep, project, "PATCH", "/shop",
        {"source": {"url": "file:///srv/git/shop",
                    "branches": ["main", "release/*"]}},
    )  # fmt: skip
    assert patched.status_code == 200, patched.text
    assert patched.json()["app"]["source"]["branches"] == ["main", "release/*"]
    assert patched.json()["app"]["version"] == 2
    gone = _api(dep, project, "DELETE", "/shop")
    assert gone.status_code == 204, gone.text
    assert _api(dep, project, "GET", "/" + app["id"]).status_code == 404
    assert _api(dep, project, "GET").json() == {"apps": []}
    again = _api(dep, project, "POST", body=_body())
    assert again.status_code == 201 and again.json()["app"]["id"] != app["id"]


@pytest.mark.parametrize(
    "body, error",
    [
        ([1], "BadRequest"),
        (_body(name="1shop"), "InvalidApp"),
        (_body(colour="red"), "InvalidApp"),
        (_body(source={"url": "https://evil.example.com/x",
                       "branches": ["main"]}), "InvalidApp"),
        (_body(source={"url": "file:///srv/git/x", "branches": []}),
         "InvalidApp"),
        (_body(builder={"name": "nonesuch"}), "InvalidApp"),
        (_body(builder={"name": "artifact", "options": {"x": 1}}),
         "InvalidApp"),
        (_body(image_parameter="flavor"), "InvalidApp"),
        (_body(stacks={"main": "nonesuch"}), "InvalidApp"),
        (_body(verify={"checks": []}), "InvalidVerify"),
        (_body(webhook_secret="short"), "InvalidApp"),
    ],
)  # fmt: skip
def test_a_wrong_body_is_a_heat_400(dep, project, body, error):
    answer = _api(dep, project, "POST", body=body)
    assert answer.status_code == 400, answer.text
    fault = answer.json()
    assert fault["code"] == 400 and fault["error"]["type"] == error
    assert _api(dep, project, "GET").json() == {"apps": []}


def test_conflicts_not_found_and_policy(dep, project):
    assert _api(dep, project, "POST", body=_body()).status_code == 201
    dup = _api(dep, project, "POST", body=_body())
    assert dup.status_code == 409, dup.text
    assert dup.json()["error"]["type"] == "AppExists"
    rename = _api(dep, project, "PATCH", "/shop", {"name": "other"})
    assert rename.status_code == 400, rename.text
    empty = _api(dep, project, "PATCH", "/shop", {})
    assert empty.status_code == 400, empty.text
    missing = _api(dep, project, "PATCH", "/nonesuch", {"verify": None})
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "AppNotFound"
    bad_sort = _api(dep, project, "GET", "?sort_key=webhook_secret")
    assert bad_sort.status_code == 400
    reader = _api(dep, project, "POST", body=_body("x"), roles="reader")
    assert reader.status_code == 403, reader.text
    assert _api(dep, project, "GET", roles="reader").status_code == 200
    gone = _api(dep, project, "DELETE", "/shop", roles="reader")
    assert gone.status_code == 403
    assert _api(dep, project, "GET", "/shop").status_code == 200


def test_paging(dep, project):
    for i in range(3):
        made = _api(dep, project, "POST", body=_body("app%d" % i))
        assert made.status_code == 201, made.text
    query = "?sort_key=name&sort_dir=asc&limit=2"
    first = _api(dep, project, "GET", query).json()["apps"]
    rest = _api(
        dep, project, "GET", query + "&marker=" + first[-1]["id"]
    ).json()["apps"]
    assert [a["name"] for a in first + rest] == ["app0", "app1", "app2"]


def test_purge_deleted_removes_deleted_apps(dep, project):
    made = _api(dep, project, "POST", body=_body("old")).json()["app"]
    assert _api(dep, project, "DELETE", "/old").status_code == 204
    out = dep.manage("purge_deleted", "-g", "seconds", "-p", project, "0")
    assert "1 apps" in out, out
    assert _api(dep, project, "GET", "/" + made["id"]).status_code == 404


def test_openstack_app_commands(dep, project, tmp_path):
    tmpl = tmp_path / "app.yaml"
    tmpl.write_text(json.dumps(TEMPLATE))

    def osc(*args, code=0):
        return osc_plugin._osc(dep, "app", *args, code=code, project=project)

    made = json.loads(
        osc(
            "create", "shop", "-f", "json",
            "--source-url", "file:///srv/git/shop",
            "--branch", "main",
            "--builder", "artifact",
            "-t", str(tmpl),
            "--image-parameter", "image",
            "--webhook-secret", SECRET,
        ).stdout
    )  # fmt: skip
    assert made["name"] == "shop" and made["webhook"] is True
    listed = json.loads(osc("list", "-f", "json").stdout)
    assert [a["Name"] for a in listed] == ["shop"]
    changed = json.loads(
        osc("set", "shop", "-f", "json", "--no-webhook-secret").stdout
    )
    assert changed["webhook"] is False and changed["version"] == 2
    refused = osc("set", "shop", "--image-parameter", "flavor", code=1)
    assert "declares no parameter flavor" in refused.stderr
    assert (
        json.loads(osc("show", "shop", "-f", "json").stdout)["id"]
        == (made["id"])
    )
    osc("delete", "shop")
    assert "could not be found" in osc("show", "shop", code=1).stderr
