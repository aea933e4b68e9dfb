"""Pushes of apps over the real API (issue 29.2): git servers' webhook
deliveries, as they send them (signed JSON or ``payload=`` form, GitLab's
token), without a token; every refusal with its code and nothing stored
(the app's builds counted through the API); the rate limit; the
authenticated push; builds listed, shown, read and cancelled; the
``openstack app push`` and ``openstack app build`` commands; a real
``git push`` to a bare repository whose post-receive hook posts the
webhook. On SQLite
(heat-lite-all, fake://) and PostgreSQL (API + engines over RabbitMQ).

The apps' source (file:///srv/git/...) does not exist: where the engine
runs builds, they fail at their fetch. Nothing here waits for a build's
outcome; states are asserted only where no builder can have moved them.
"""

import hashlib
import hmac
import json
import os
import subprocess
import sys
import uuid

import pytest
import requests

from harness import deployment as deployment_mod
from harness import git_repo
from tests.functional import test_osc_plugin as osc_plugin

SECRET = "a webhook secret of the app"
BURST = 30
MAX_SIZE = 4096
EXTRA = """
[DEFAULT]
auth_encryption_key = an encryption key of 32 chars...
[apps]
allowed_sources = file:///srv/git/*
max_webhook_size = %d
webhook_rate = 0.01
webhook_burst = %d
""" % (MAX_SIZE, BURST)
C1 = "1" * 40
C2 = "2" * 40


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def dep(request, tmp_path_factory):
    yield from deployment_mod.running(
        request.param,
        tmp_path_factory.mktemp("pushes-" + request.param),
        extra_conf=EXTRA,
    )


@pytest.fixture
def project():
    return "p" + uuid.uuid4().hex[:8]


def _app(dep, project, name="shop", secret=SECRET):
    body = {
        "name": name,
        "source": {"url": "file:///srv/git/shop", "branches": ["main"]},
        "builder": {"name": "artifact"},
        "template": git_repo.APP_TEMPLATE,
        "image_parameter": "image",
    }
    if secret:
        body["webhook_secret"] = secret
    made = requests.post(
        dep.endpoint(project) + "/apps",
        json=body,
        headers={"X-Auth-User": "dev"},
        timeout=60,
    )
    assert made.status_code == 201, made.text
    return made.json()["app"]


def _signed(payload, secret=SECRET, event="push", delivery=None, form=False):
    """(headers, body) of a GitHub delivery; no signature for None."""
    if form:
        body = ("payload=" + json.dumps(payload)).encode()
        ctype = "application/x-www-form-urlencoded"
    else:
        body = json.dumps(payload).encode()
        ctype = "application/json"
    headers = {
        "Content-Type": ctype,
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "User-Agent": "GitHub-Hookshot/test",
    }
    if secret is not None:
        digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        headers["X-Hub-Signature-256"] = "sha256=" + digest
    return headers, body


def _push(ref="refs/heads/main", after=C1):
    return {"ref": ref, "before": "0" * 40, "after": after}


def _hook(dep, project, app, headers, body):
    """POST to the webhook as a git server does: no token, no user."""
    return requests.post(
        dep.endpoint(project) + "/apps/%s/webhook" % app,
        data=body,
        headers=headers,
        timeout=60,
    )


def _api(dep, project, method, path, body=None, roles=None, headers=None):
    headers = dict(headers or {}, **{"X-Auth-User": "dev"})
    if roles:
        headers["X-Roles"] = roles
    return requests.request(
        method,
        dep.endpoint(project) + "/apps/shop" + path,
        json=body,
        headers=headers,
        timeout=60,
    )


def _count(dep, project):
    listed = _api(dep, project, "GET", "/builds")
    assert listed.status_code == 200, listed.text
    return len(listed.json()["builds"])


def _error(response, code):
    assert response.status_code == code, response.text
    assert response.json()["code"] == code
    return response.json()["error"]


def test_a_signed_delivery_is_a_build(dep, project):
    _app(dep, project)
    headers, body = _signed(_push(), delivery="gh-1")
    answer = _hook(dep, project, "shop", headers, body)
    assert answer.status_code == 202, answer.text
    build = answer.json()["build"]
    assert build["status"] == "QUEUED" and build["commit"] == C1
    assert build["delivery_id"] == "gh-1" and build["source"] == "webhook"
    shown = _api(dep, project, "GET", "/builds/" + build["id"])
    assert shown.status_code == 200
    chain = shown.json()["build"]
    for key in (
        "ref",
        "builder",
        "image_id",
        "template_id",
        "stack_name",
        "traversal",
        "verification",
        "log_tail",
        "status_reason",
    ):
        assert key in chain, key  # fmt: skip
    assert chain["stack_name"] == "shop-main"
    # The same delivery again (a redelivery): 409, nothing more stored.
    _error(_hook(dep, project, "shop", headers, body), 409)
    # The form GitHub and Gitea can send, and GitLab's token.
    headers, body = _signed(_push(after=C2), form=True)
    assert _hook(dep, project, "shop", headers, body).status_code == 202
    gitlab = {
        "Content-Type": "application/json",
        "X-Gitlab-Token": SECRET,
        "X-Gitlab-Event": "Push Hook",
        "X-Gitlab-Event-UUID": "gl-1",
    }
    payload = dict(_push(), object_kind="push")
    answer = _hook(dep, project, "shop", gitlab, json.dumps(payload))
    assert answer.status_code == 202, answer.text
    assert _count(dep, project) == 3
    log = _api(dep, project, "GET", "/builds/%s/log" % build["id"])
    assert log.status_code == 200
    assert set(log.json()) == {"log", "next_offset"}


def test_ignored_deliveries_are_200_and_store_nothing(dep, project):
    _app(dep, project)
    for payload, event, reason in (
        ({"zen": "Keep it logically awesome."}, "ping", "ping"),
        (_push(ref="refs/heads/dev"), "push", "branch dev is not followed"),
        (_push(after="0" * 40), "push", "refs/heads/main was deleted"),
    ):
        answer = _hook(dep, project, "shop", *_signed(payload, event=event))
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"ignored": reason}
    assert _count(dep, project) == 0


def test_refusals_store_nothing_and_say_nothing_of_apps(dep, project):
    _app(dep, project)
    _app(dep, project, name="nosecret", secret=None)
    forged = []
    for app, (headers, body) in (
        ("shop", _signed(_push(), secret="a guess of the secret")),
        ("nosecret", _signed(_push())),
        ("nonesuch", _signed(_push())),
    ):
        forged.append(_error(_hook(dep, project, app, headers, body), 401))
    assert forged[0] == forged[1] == forged[2]
    unsigned = [
        _error(_hook(dep, project, app, *_signed(_push(), secret=None)), 401)
        for app in ("shop", "nonesuch")
    ]
    assert unsigned[0] == unsigned[1]
    # Malformed (signed): 400.
    for payload in (_push(after="HEAD"), _push(ref="main"), ["a list"]):
        _error(_hook(dep, project, "shop", *_signed(payload)), 400)
    headers, body = _signed(_push())
    _error(_hook(dep, project, "shop", headers, b"{" + body), 401)
    # Oversized: 413 before the body is read, app or not.
    big = dict(_push(), padding="x" * MAX_SIZE)
    for app in ("shop", "nonesuch"):
        _error(_hook(dep, project, app, *_signed(big)), 413)
    # What a web page could make a browser send.
    headers, body = _signed(_push())
    for change in (
        {"Content-Type": "text/plain"},
        {"Origin": "http://evil.example"},
    ):
        refused = _hook(dep, project, "shop", dict(headers, **change), body)
        assert refused.status_code in (403, 415), refused.text
    assert _count(dep, project) == 0


def test_each_app_url_is_rate_limited(dep, project):
    headers, body = _signed(_push(), secret="forged")
    codes = [
        _hook(dep, project, "flooded", headers, body).status_code
        for _ in range(BURST + 1)
    ]
    assert codes == [401] * BURST + [429]
    last = _hook(dep, project, "flooded", headers, body)
    assert _error(last, 429)["type"] == "TooManyRequests"
    assert int(last.headers["Retry-After"]) >= 1
    # Another app's URL has a bucket of its own.
    _app(dep, project)
    headers, body = _signed(_push())
    assert _hook(dep, project, "shop", headers, body).status_code == 202


def test_an_authenticated_push_and_the_builds(dep, project):
    _app(dep, project, secret=None)
    pushed = _api(
        dep, project, "POST", "/pushes", {"ref": "refs/heads/main",
                                          "commit": C1}
    )  # fmt: skip
    assert pushed.status_code == 202, pushed.text
    first = pushed.json()["build"]
    assert first["source"] == "push" and first["status"] == "QUEUED"
    second = _api(
        dep, project, "POST", "/pushes", {"ref": "refs/heads/main",
                                          "commit": C2}
    ).json()["build"]  # fmt: skip
    listed = _api(dep, project, "GET", "/builds").json()["builds"]
    assert [b["id"] for b in listed] == [second["id"], first["id"]]
    page = _api(dep, project, "GET", "/builds?limit=1&branch=main")
    assert [b["id"] for b in page.json()["builds"]] == [second["id"]]
    _error(_api(dep, project, "GET", "/builds?status=DONE"), 400)
    _error(_api(dep, project, "GET", "/builds?marker=nonesuch"), 400)
    _error(_api(dep, project, "GET", "/builds/nonesuch"), 404)
    for body in (
        {"ref": "refs/heads/main"},
        {"ref": "main", "commit": C1},
        {"ref": "refs/heads/main", "commit": C1, "x": 1},
    ):
        _error(_api(dep, project, "POST", "/pushes", body), 400)  # fmt: skip
    _error(
        _api(dep, project, "POST", "/pushes",
             {"ref": "refs/heads/main", "commit": C1}, roles="reader"),
        403,
    )  # fmt: skip
    _error(
        _api(dep, project, "POST", "/builds/%s/actions" % second["id"],
             {"cancel": None}, roles="reader"),
        403,
    )  # fmt: skip
    _error(
        _api(dep, project, "POST", "/builds/%s/actions" % second["id"],
             {"rebuild": None}),
        400,
    )  # fmt: skip
    # A cancel: at once if still queued, at the next step if running,
    # 409 if its build has ended already (the fetch of a source that is
    # not there fails fast where builds run).
    cancelled = _api(
        dep, project, "POST", "/builds/%s/actions" % second["id"],
        {"cancel": None},
    )  # fmt: skip
    if cancelled.status_code == 200:
        build = cancelled.json()["build"]
        assert build["status"] == "CANCELLED" or build["cancel_requested"]
    else:
        assert _error(cancelled, 409)["type"] == "BuildFinished"
    # A retried push with its Idempotency-Key: one build.
    keyed = {"Idempotency-Key": "ci-run-7"}
    body = {"ref": "refs/heads/main", "commit": C1}
    first_try = _api(dep, project, "POST", "/pushes", body, headers=keyed)
    assert first_try.status_code == 202, first_try.text
    retried = _api(dep, project, "POST", "/pushes", body, headers=keyed)
    assert _error(retried, 409)["type"] == "DuplicateDelivery"
    assert _count(dep, project) == 3


def test_openstack_app_push_and_build_commands(dep, project):
    _app(dep, project, secret=None)

    def osc(*args, code=0):
        return osc_plugin._osc(dep, "app", *args, code=code, project=project)

    pushed = json.loads(
        osc("push", "shop", "--ref", "main", "--commit", C1, "-f", "json")
        .stdout
    )  # fmt: skip
    assert pushed["commit"] == C1 and pushed["ref"] == "refs/heads/main"
    ignored = json.loads(
        osc("push", "shop", "--ref", "dev", "--commit", C1, "-f", "json")
        .stdout
    )  # fmt: skip
    assert ignored == {"ignored": "branch dev is not followed"}
    listed = json.loads(osc("build", "list", "shop", "-f", "json").stdout)
    assert [b["ID"] for b in listed] == [pushed["id"]]
    assert listed[0]["Commit"] == C1[:12]
    refused = osc("build", "list", "shop", "--status", "DONE", code=1)
    assert "--status must be one of QUEUED" in refused.stderr
    shown = json.loads(
        osc("build", "show", "shop", pushed["id"], "-f", "json").stdout
    )
    assert shown["id"] == pushed["id"] and "log_tail" in shown
    osc("build", "log", "shop", pushed["id"])
    assert "could not be found" in (
        osc("build", "show", "shop", "nonesuch", code=1).stderr
    )


# A git server's post-receive hook, as GitHub/Gitea send pushes: each
# updated ref posted as a signed JSON delivery (the hook runs with the
# test's Python; its argv: URL, secret).
POST_RECEIVE = """#!%(python)s
import hashlib, hmac, json, sys, urllib.error, urllib.request, uuid
url, secret = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    before, after, ref = line.split()
    body = json.dumps({"ref": ref, "before": before, "after": after,
                       "deleted": set(after) == {"0"}}).encode()
    sig = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    request = urllib.request.Request(url, data=body, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "push",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": "sha256=" + sig})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            print("webhook", answer.status, answer.read().decode())
    except urllib.error.HTTPError as exc:
        print("webhook", exc.code, exc.read().decode())
"""


def _git(cwd, *args):
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(
            os.environ,
            GIT_AUTHOR_NAME="dev",
            GIT_AUTHOR_EMAIL="dev@example.com",
            GIT_COMMITTER_NAME="dev",
            GIT_COMMITTER_EMAIL="dev@example.com",
        ),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def test_a_real_git_push_posts_the_webhook(dep, project, tmp_path):
    _app(dep, project)
    bare = tmp_path / "shop.git"
    _git(tmp_path, "init", "--bare", "-q", "-b", "main", str(bare))
    hook = bare / "hooks" / "post-receive-delivery"
    hook.write_text(POST_RECEIVE % {"python": sys.executable})
    hook.chmod(0o755)
    wrapper = bare / "hooks" / "post-receive"
    wrapper.write_text(
        '#!/bin/sh\nexec "%s" "%s" "%s"\n'
        % (hook, dep.endpoint(project) + "/apps/shop/webhook", SECRET)
    )
    wrapper.chmod(0o755)
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(bare), str(work))
    (work / "README").write_text("one\n")
    _git(work, "add", "README")
    _git(work, "commit", "-q", "-m", "one")
    out = _git(work, "push", "origin", "HEAD:main")
    assert "webhook 202" in out, out
    head = _git(work, "rev-parse", "HEAD").strip()
    builds = _api(dep, project, "GET", "/builds").json()["builds"]
    assert [(b["commit"], b["branch"]) for b in builds] == [(head, "main")]
    # A branch the app does not follow, and its deletion: ignored.
    out = _git(work, "push", "origin", "HEAD:topic")
    assert "webhook 200" in out and "not followed" in out, out
    out = _git(work, "push", "origin", ":topic")
    assert "webhook 200" in out and "was deleted" in out, out
    assert _count(dep, project) == 1
