"""A project's default image retention over the real API (issue 30 item
2): ``GET/PUT/DELETE /v1/{project}/retention`` and ``openstack app
retention show|set|unset``; Heat's JSON errors (400 as an app's
retention, 403 for a reader, 404 when none is set); each project sees
and sets only its own; the images' view and an app's effective policy
follow it. On SQLite (heat-lite-all), a deployment like
test_images_api's.
"""

import datetime
import json
import uuid

import pytest
import requests

from harness import deployment as deployment_mod
from heat_lite.db import image_moves
from tests.functional import test_apps
from tests.functional import test_osc_plugin as osc_plugin
from tests.functional.test_images_api import _attached, _image

OPTIONS = {"keep_last": 3, "grace": 86400, "mode": "delete"}


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite",
        tmp_path_factory.mktemp("retention"),
        extra_conf=test_apps.EXTRA,
    )


@pytest.fixture
def project():
    return "p" + uuid.uuid4().hex[:8]


def _call(dep, project, method, body=None, roles=None, code=200):
    headers = {"X-Auth-User": "u"}
    if roles:
        headers["X-Roles"] = roles
    answer = requests.request(
        method,
        dep.endpoint(project) + "/retention",
        json=body,
        headers=headers,
        timeout=60,
    )
    assert answer.status_code == code, answer.text
    return answer.json() if answer.content else None


def test_set_show_unset(dep, project):
    shown = _call(dep, project, "GET")["retention"]
    assert shown == {
        "project": project,
        "project_default": {},
        "options": OPTIONS,
        "effective": OPTIONS,
        "updated_at": None,
    }
    body = {"retention": {"keep_last": 5, "mode": "hide"}}
    set_ = _call(dep, project, "PUT", body)["retention"]
    assert set_["project_default"] == {"keep_last": 5, "mode": "hide"}
    assert set_["effective"] == dict(OPTIONS, keep_last=5, mode="hide")
    assert _call(dep, project, "GET")["retention"] == set_
    # A PUT replaces the whole default.
    again = _call(dep, project, "PUT", {"retention": {"grace": 60}})
    assert again["retention"]["project_default"] == {"grace": 60}
    assert _call(dep, project, "DELETE", code=204) is None
    assert _call(dep, project, "GET")["retention"]["project_default"] == {}
    error = _call(dep, project, "DELETE", code=404)["error"]
    assert error["type"] == "RetentionDefaultNotFound"


def test_bad_values_are_refused_as_for_an_app(dep, project):
    for retention in (
        {"keep_last": -1},
        {"keep_last": "3"},
        {"grace": 1.5},
        # Past what a database integer and a date hold (fuzzer-found 500).
        {"grace": 365220810083232705937408},
        {"grace": 2**31},
        {"keep_last": 10**7},
        {"mode": "purge"},
        {"keep": 1},
        {},
        "hide",
    ):
        error = _call(dep, project, "PUT", {"retention": retention}, code=400)
        assert error["code"] == 400 and error["error"]["type"], retention
        # The app's body says the same about the same value.
        app = test_apps._api(
            dep, project, "POST", body=test_apps._body(retention=retention)
        )
        if retention != {}:
            assert app.status_code == 400, (retention, app.text)
    for body in ({}, {"retention": {"mode": "hide"}, "x": 1}, []):
        _call(dep, project, "PUT", body, code=400)
    assert _call(dep, project, "GET")["retention"]["project_default"] == {}


def test_a_reader_may_look_but_not_set(dep, project):
    assert _call(dep, project, "GET", roles="reader")["retention"]
    body = {"retention": {"keep_last": 1}}
    error = _call(dep, project, "PUT", body, roles="reader", code=403)
    assert error["code"] == 403
    _call(dep, project, "DELETE", roles="reader", code=403)
    _call(dep, project, "PUT", body, roles="member")
    _call(dep, project, "DELETE", roles="member", code=204)


def test_each_project_sees_and_sets_only_its_own(dep, project):
    other = "o" + project
    _call(dep, project, "PUT", {"retention": {"keep_last": 9}})
    assert _call(dep, other, "GET")["retention"]["project_default"] == {}
    _call(dep, other, "DELETE", code=404)
    _call(dep, other, "PUT", {"retention": {"keep_last": 1}})
    _call(dep, other, "DELETE", code=204)
    mine = _call(dep, project, "GET")["retention"]
    assert mine["project_default"] == {"keep_last": 9}


def test_images_and_apps_show_the_effective_policy(dep, project):
    _call(dep, project, "PUT", {"retention": {"grace": 60, "keep_last": 1}})
    with _attached(dep):
        image_id = _image(project, "spare", datetime.datetime(2026, 12, 2))
        hidden_at = datetime.datetime(2026, 12, 3, 12)
        image_moves.move(image_id, 0, "NEEDED", "UNNEEDED")
        image_moves.move(
            image_id, 0, "UNNEEDED", "HIDDEN", hidden_at=hidden_at
        )
    answer = requests.get(
        dep.endpoint(project) + "/images/" + image_id,
        headers={"X-Auth-User": "u"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    image = answer.json()["image"]
    assert image["retention"] == dict(OPTIONS, grace=60, keep_last=1)
    assert image["goes_at"] == "2026-12-03T12:01:00Z"
    made = test_apps._api(
        dep,
        project,
        "POST",
        body=test_apps._body(retention={"keep_last": 4}),
    )
    assert made.status_code == 201, made.text
    assert made.json()["app"]["retention"] == {
        "keep_last": 4,  # the app's own
        "grace": 60,  # the project's
        "mode": "delete",  # the option
    }


def test_openstack_app_retention(dep, project):
    def osc(*args, code=0):
        return osc_plugin._osc(
            dep, "app", "retention", *args, code=code, project=project
        )

    shown = json.loads(osc("show", "-f", "json").stdout)
    assert (shown["keep_last"], shown["mode"]) == (3, "delete")
    set_ = json.loads(
        osc("set", "--keep-last", "5", "--grace", "60", "-f", "json").stdout
    )
    assert (set_["keep_last"], set_["grace"]) == (5, 60)
    # set changes only the keys given.
    set_ = json.loads(osc("set", "--mode", "hide", "-f", "json").stdout)
    assert (set_["keep_last"], set_["mode"]) == (5, "hide")
    osc("unset", "--grace")
    shown = json.loads(osc("show", "-f", "json").stdout)
    assert shown["project_default"] == {"keep_last": 5, "mode": "hide"}
    assert shown["grace"] == 86400
    osc("unset")
    shown = json.loads(osc("show", "-f", "json").stdout)
    assert shown["project_default"] == {}
    failed = osc("set", "--keep-last", "-1", code=1)
    assert "keep_last" in failed.stderr
    osc("set", code=1)
