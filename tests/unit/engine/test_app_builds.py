"""Pushes and builds over RPC (one engine process, SQLite file, fake://
transport): a signed delivery becomes a QUEUED build, every refusal
(forged, unknown app, malformed, oversized, replayed) travels back typed
with nothing stored, and the builds are listed, shown, read and
cancelled in the caller's project only.

The engine's builder runner, where there is one, is held (it claims
nothing): builds stay as the pushes left them, so what is asserted of
their states is this module's doing, not a race with a builder.
"""

import base64
import hashlib
import hmac
import json
import uuid

import pytest

from harness import inprocess
from heat_lite import conf
from heat_lite.apps import webhook as hooks
from heat_lite.common import context, exception
from heat_lite.db import builds as db_builds
from heat_lite.engine import rpcapi
from heat_lite.engine.fleet.app import builds as builds_endpoint

CONF = conf.CONF
SECRET = "a webhook secret of the app"
C1 = "1" * 40
C2 = "2" * 40


pytestmark = pytest.mark.usefixtures("apps_conf")


def _hold_builds(proc):
    runner = getattr(proc, "builds", None)
    if runner is not None:
        runner.start = lambda: None
        runner.claim_queued = lambda *args, **kwargs: []


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite",
        tmp_path_factory.mktemp("builds"),
        prepare=_hold_builds,
        binary="test-builds",
    ) as proc:
        yield proc


@pytest.fixture
def api():
    return rpcapi.EngineAPI(timeout=30)


def _ctxt(project=None, user="dev"):
    return context.RequestContext(
        project_id=project or "p" + uuid.uuid4().hex[:8],
        user_id=user,
        overwrite=False,
    )


def _app(api, ctxt, name="shop", secret=SECRET):
    body = {
        "name": name,
        "source": {"url": "file:///srv/git/shop", "branches": ["main"]},
        "builder": {"name": "artifact"},
        "template": {
            "heat_template_version": "2021-04-16",
            "parameters": {"image": {"type": "string"}},
        },
        "image_parameter": "image",
    }
    if secret:
        body["webhook_secret"] = secret
    return api.create_app(ctxt, body)


def _github(payload, secret=SECRET, event="push", delivery=None, **extra):
    """(headers, base64 body) of a GitHub delivery signed with
    ``secret`` (None: unsigned)."""
    body = json.dumps(payload).encode()
    headers = {
        "content-type": "application/json",
        "x-github-event": event,
        "x-github-delivery": delivery or str(uuid.uuid4()),
    }
    if secret is not None:
        digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        headers["x-hub-signature-256"] = "sha256=" + digest
    headers.update(extra)
    return headers, base64.b64encode(body).decode()


def _push(ref="refs/heads/main", after=C1, **extra):
    return dict({"ref": ref, "before": "0" * 40, "after": after}, **extra)


def _stored():
    """Every QUEUED build of every app: a refused delivery adds none."""
    return len(db_builds.builds_queued())


def test_a_signed_push_becomes_a_queued_build(api):
    ctxt = _ctxt()
    app = _app(api, ctxt)
    hook = _ctxt(ctxt.project_id, user=None)
    headers, body = _github(_push(), delivery="d-1")
    built = api.app_webhook(hook, "shop", headers, body)["build"]
    assert built["status"] == "QUEUED" and built["source"] == "webhook"
    assert (built["branch"], built["ref"], built["commit"]) == (
        "main",
        "refs/heads/main",
        C1,
    )
    assert built["delivery_id"] == "d-1" and built["builder"] == "artifact"
    assert built["app_id"] == app["id"] and built["stack_name"] == "shop-main"
    shown = api.show_build(ctxt, "shop", built["id"])
    assert shown["log_tail"] == "" and shown["image_id"] is None
    assert [b["id"] for b in api.list_builds(ctxt, app["id"])] == [built["id"]]
    # The same delivery again: 409, nothing more stored.
    before = _stored()
    with pytest.raises(exception.DuplicateDelivery):
        api.app_webhook(hook, "shop", headers, body)
    assert _stored() == before


def test_gitlab_token_and_form_encoded_github(api):
    ctxt = _ctxt()
    _app(api, ctxt)
    body = json.dumps(dict(_push(after=C2), object_kind="push")).encode()
    headers = {
        "x-gitlab-token": SECRET,
        "x-gitlab-event": "Push Hook",
        "x-gitlab-event-uuid": "u-1",
    }
    built = api.app_webhook(
        ctxt, "shop", headers, base64.b64encode(body).decode()
    )["build"]
    assert built["commit"] == C2 and built["delivery_id"] == "u-1"
    form = ("payload=" + json.dumps(_push())).encode()
    digest = hmac.new(SECRET.encode(), form, hashlib.sha256).hexdigest()
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-github-event": "push",
        "x-hub-signature-256": "sha256=" + digest,
    }
    built = api.app_webhook(
        ctxt, "shop", headers, base64.b64encode(form).decode()
    )["build"]
    assert built["commit"] == C1


def test_authentic_deliveries_that_build_nothing_are_ignored(api):
    ctxt = _ctxt()
    _app(api, ctxt)
    before = _stored()
    for payload, event, reason in (
        ({"zen": "hi"}, "ping", "ping"),
        (_push(), "issues", "event 'issues' is not a push"),
        (_push(ref="refs/heads/dev"), "push", "branch dev is not followed"),
        (_push(after="0" * 40), "push", "refs/heads/main was deleted"),
        (_push(ref="refs/tags/v1"), "push", "refs/tags/v1 is not a branch"),
    ):
        headers, body = _github(payload, event=event)
        assert api.app_webhook(ctxt, "shop", headers, body) == {
            "ignored": reason
        }
    assert _stored() == before


def test_forged_and_unknown_get_one_answer_and_store_nothing(api):
    ctxt = _ctxt()
    _app(api, ctxt)
    _app(api, ctxt, name="nosecret", secret=None)
    other = _ctxt()
    before = _stored()
    messages = set()
    for project, app, (headers, body) in (
        (ctxt, "shop", _github(_push(), secret="not the secret, no")),
        (ctxt, "nosecret", _github(_push())),
        (ctxt, "nonesuch", _github(_push())),
        (other, "shop", _github(_push())),  # another project's app
    ):
        with pytest.raises(hooks.WebhookUnauthenticated) as caught:
            api.app_webhook(project, app, headers, body)
        messages.add(str(caught.value))
    assert messages == {
        "Webhook refused: x-hub-signature-256 does not match the body"
    }
    headers, body = _github(_push(), secret=None)
    with pytest.raises(hooks.WebhookUnauthenticated):
        api.app_webhook(ctxt, "shop", headers, body)
    headers, body = _github(_push())
    headers["x-gitlab-token"] = "a guess of the secret"
    headers["x-gitlab-event"] = "Push Hook"
    with pytest.raises(hooks.WebhookUnauthenticated):
        api.app_webhook(ctxt, "shop", headers, body)
    assert _stored() == before


def test_malformed_and_oversized_store_nothing(api):
    ctxt = _ctxt()
    _app(api, ctxt)
    before = _stored()
    for payload in (
        _push(after="not a commit"),
        _push(ref="main"),
        {"ref": ["refs/heads/main"]},
    ):
        headers, body = _github(payload)
        with pytest.raises(hooks.WebhookMalformed):
            api.app_webhook(ctxt, "shop", headers, body)
    headers, body = _github(_push())
    with pytest.raises(hooks.WebhookMalformed):
        api.app_webhook(ctxt, "shop", headers, "not base64!")
    for bad in (None, ["x-github-event"], {"x-github-event": 1}):
        with pytest.raises(hooks.WebhookMalformed):
            api.app_webhook(ctxt, "shop", bad, body)
    big = _push(padding="x" * CONF.apps.max_webhook_size)
    with pytest.raises(hooks.WebhookTooLarge):
        api.app_webhook(ctxt, "nonesuch", *_github(big))
    assert _stored() == before


def test_an_authenticated_push_and_its_refusals(api):
    ctxt = _ctxt()
    app = _app(api, ctxt, secret=None)
    built = api.app_push(ctxt, "shop", "refs/heads/main", C1)["build"]
    assert built["source"] == "push" and built["delivery_id"] is None
    again = api.app_push(ctxt, "shop", "refs/heads/main", C2, "key-1")
    # Converge on the newest: the older QUEUED build is superseded.
    statuses = {
        b["commit"]: b["status"] for b in api.list_builds(ctxt, app["id"])
    }
    assert statuses == {C1: "SUPERSEDED", C2: "QUEUED"}
    before = _stored()
    with pytest.raises(exception.DuplicateDelivery):
        api.app_push(ctxt, "shop", "refs/heads/main", C1, "key-1")
    for ref, commit, key in (
        ("main", C1, None),
        ("refs/tags/v1", C1, None),
        ("refs/heads/main", "HEAD", None),
        ("refs/heads/main", C1, "a key with spaces"),
    ):
        with pytest.raises(hooks.WebhookMalformed):
            api.app_push(ctxt, "shop", ref, commit, key)
    assert api.app_push(ctxt, "shop", "refs/heads/dev", C1) == {
        "ignored": "branch dev is not followed"
    }
    with pytest.raises(exception.AppNotFound):
        api.app_push(_ctxt(), "shop", "refs/heads/main", C1)
    assert _stored() == before
    assert again["build"]["status"] == "QUEUED"


def test_list_show_log_and_cancel(api):
    ctxt = _ctxt()
    _app(api, ctxt, secret=None)
    first = api.app_push(ctxt, "shop", "refs/heads/main", C1)["build"]
    api.update_app(
        ctxt,
        "shop",
        {"source": {"url": "file:///srv/git/shop",
                    "branches": ["main", "rel/*"]}},
    )  # fmt: skip
    rel = api.app_push(ctxt, "shop", "refs/heads/rel/1", C2)["build"]
    assert rel["stack_name"] == "shop-rel-1"
    listed = api.list_builds(ctxt, "shop")
    assert [b["id"] for b in listed] == [rel["id"], first["id"]]
    assert [b["id"] for b in api.list_builds(ctxt, "shop", limit=1)] == [
        rel["id"]
    ]
    page = api.list_builds(ctxt, "shop", marker=rel["id"])
    assert [b["id"] for b in page] == [first["id"]]
    only = api.list_builds(ctxt, "shop", branch="rel/1", status=["QUEUED"])
    assert [b["id"] for b in only] == [rel["id"]]
    with pytest.raises(exception.Invalid):
        api.list_builds(ctxt, "shop", status="DONE")
    with pytest.raises(exception.Invalid):
        api.list_builds(ctxt, "shop", limit=-1)

    db_builds.build_log_append(first["id"], "fetching\n" + "x" * 9000)
    log = api.build_log(ctxt, "shop", first["id"])
    assert log["log"].startswith("fetching\n")
    assert log["next_offset"] == 9009
    later = api.build_log(ctxt, "shop", first["id"], offset=9000)
    assert later == {"log": "x" * 9, "next_offset": 9009}
    tail = api.show_build(ctxt, "shop", first["id"])["log_tail"]
    assert tail == "x" * builds_endpoint.LOG_TAIL
    with pytest.raises(exception.Invalid):
        api.build_log(ctxt, "shop", first["id"], offset=-1)

    cancelled = api.cancel_build(ctxt, "shop", first["id"])
    assert cancelled["status"] == "CANCELLED"
    with pytest.raises(exception.BuildFinished):
        api.cancel_build(ctxt, "shop", first["id"])


def test_another_project_reaches_no_build(api):
    ctxt, other = _ctxt(), _ctxt()
    _app(api, ctxt, secret=None)
    built = api.app_push(ctxt, "shop", "refs/heads/main", C1)["build"]
    _app(api, other, secret=None)
    for call in (
        lambda: api.show_build(other, "shop", built["id"]),
        lambda: api.build_log(other, "shop", built["id"]),
        lambda: api.cancel_build(other, "shop", built["id"]),
    ):
        with pytest.raises(exception.BuildNotFound):
            call()
    with pytest.raises(exception.AppNotFound):
        api.show_build(other, built["app_id"], built["id"])
    assert api.list_builds(other, "shop") == []
    assert api.show_build(ctxt, "shop", built["id"])["status"] == "QUEUED"


def test_a_stored_build_wakes_the_builders_once(api):
    woken = []
    endpoint = builds_endpoint.BuildEndpoint(wake=woken.append)
    ctxt = _ctxt()
    _app(api, ctxt, secret=None)
    endpoint.app_push(ctxt, "shop", "refs/heads/main", C1)
    assert woken == [ctxt]
    endpoint.app_push(ctxt, "shop", "refs/heads/dev", C1)
    assert woken == [ctxt]
