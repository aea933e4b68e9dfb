"""Webhook deliveries shaped like the ones GitHub, Gitea, Forgejo and
GitLab send: signed, forged, oversized, malformed, ping, branch delete."""

import hashlib
import hmac
import json
from urllib import parse as urlparse

import hypothesis
import pytest
from hypothesis import strategies as st

from heat_lite.apps import refs, webhook

SECRET = "s3cr3t-of-the-app"
BEFORE = "28e1879d029cb852e4844d9c718537df08844e03"
AFTER = "bffeb74224043ba2feb48d137756c8a9331c449a"
ZEROS = "0" * 40
LIMIT = 65536


def github_push(**over):
    payload = {
        "ref": "refs/heads/main",
        "before": BEFORE,
        "after": AFTER,
        "created": False,
        "deleted": False,
        "forced": False,
        "repository": {
            "full_name": "octo/app",
            "clone_url": "https://github.com/octo/app.git",
            "ssh_url": "git@github.com:octo/app.git",
            "git_url": "git://github.com/octo/app.git",
            "html_url": "https://github.com/octo/app",
        },
        "pusher": {"name": "octocat", "email": "o@example.com"},
        "commits": [{"id": AFTER, "message": "fix"}],
    }
    payload.update(over)
    return json.dumps(payload).encode()


def gitea_push(**over):
    payload = {
        "ref": "refs/heads/develop",
        "before": BEFORE,
        "after": AFTER,
        "compare_url": "http://localhost:3000/gitea/webhooks/compare/x",
        "repository": {
            "clone_url": "http://localhost:3000/gitea/webhooks.git",
            "ssh_url": "gitea@localhost:gitea/webhooks.git",
            "html_url": "http://localhost:3000/gitea/webhooks",
        },
        "pusher": {"login": "gitea", "username": "gitea"},
    }
    payload.update(over)
    return json.dumps(payload).encode()


def gitlab_push(**over):
    payload = {
        "object_kind": "push",
        "event_name": "push",
        "before": BEFORE,
        "after": AFTER,
        "ref": "refs/heads/main",
        "checkout_sha": AFTER,
        "user_username": "jsmith",
        "project": {
            "git_http_url": "https://gitlab.example.com/mike/diaspora.git",
            "git_ssh_url": "git@gitlab.example.com:mike/diaspora.git",
            "web_url": "https://gitlab.example.com/mike/diaspora",
        },
        "repository": {
            "git_http_url": "https://gitlab.example.com/mike/diaspora.git",
            "homepage": "https://gitlab.example.com/mike/diaspora",
        },
    }
    payload.update(over)
    return json.dumps(payload).encode()


def sign(body, secret=SECRET):
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def github_headers(
    body, event="push", delivery="72d3162e-cc78-11e3-81ab-4c9367dc0958"
):
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": "sha256=" + sign(body),
        "Content-Type": "application/json",
    }


def gitea_headers(
    body, event="push", delivery="f6266f16-1bf3-46a5-9ea4-602e06ead473"
):
    # Gitea sends its own headers and GitHub's, and two signatures.
    return {
        "X-GitHub-Delivery": delivery,
        "X-GitHub-Event": event,
        "X-Gitea-Delivery": delivery,
        "X-Gitea-Event": event,
        "X-Gitea-Signature": sign(body),
        "X-Hub-Signature-256": "sha256=" + sign(body),
    }


def gitlab_headers(event="Push Hook", token=SECRET, **extra):
    headers = {
        "X-Gitlab-Event": event,
        "X-Gitlab-Token": token,
        "X-Gitlab-Event-UUID": "13792a34-cac6-4fda-95a8-c58e00a3954e",
    }
    headers.update(extra)
    return headers


def parse(headers, body, secret=SECRET, limit=LIMIT):
    return webhook.parse_delivery(headers, body, secret, limit)


def test_github_push_is_read():
    body = github_push()
    push = parse(github_headers(body), body)
    assert push == webhook.Push(
        ref="refs/heads/main",
        branch="main",
        commit=AFTER,
        before=BEFORE,
        delivery_id="72d3162e-cc78-11e3-81ab-4c9367dc0958",
        repository_urls=(
            "https://github.com/octo/app.git",
            "git@github.com:octo/app.git",
            "git://github.com/octo/app.git",
            "https://github.com/octo/app",
        ),
        pusher="octocat",
        forge="github",
    )


def test_push_is_immutable():
    body = github_push()
    push = parse(github_headers(body), body)
    with pytest.raises(AttributeError):
        push.commit = BEFORE


def test_headers_are_case_insensitive():
    body = github_push()
    headers = {k.lower(): v for k, v in github_headers(body).items()}
    assert parse(headers, body).commit == AFTER


def test_gitea_push_with_both_signatures():
    body = gitea_push()
    push = parse(gitea_headers(body), body)
    assert (push.branch, push.pusher) == ("develop", "gitea")
    assert push.delivery_id == "f6266f16-1bf3-46a5-9ea4-602e06ead473"


def test_gitea_signature_alone_is_accepted():
    body = gitea_push()
    headers = gitea_headers(body)
    del headers["X-Hub-Signature-256"]
    assert parse(headers, body).commit == AFTER


def test_forgejo_push():
    body = gitea_push()
    headers = {
        "X-Forgejo-Event": "push",
        "X-Forgejo-Delivery": "5e2f3a1c-0000-4000-8000-000000000001",
        "X-Forgejo-Signature": sign(body),
    }
    push = parse(headers, body)
    assert push.delivery_id == "5e2f3a1c-0000-4000-8000-000000000001"


def test_sha256_repository_commit_is_accepted():
    commit = hashlib.sha256(b"x").hexdigest()
    body = github_push(after=commit, before="0" * 64)
    push = parse(github_headers(body), body)
    assert (push.commit, push.before) == (commit, None)


@pytest.mark.parametrize(
    "mangle",
    [
        lambda h, b: h.update(
            {"X-Hub-Signature-256": "sha256=" + sign(b, "guess")}
        ),
        lambda h, b: h.update({"X-Hub-Signature-256": "sha1=" + sign(b)}),
        lambda h, b: h.update({"X-Hub-Signature-256": "sha256=zz"}),
        lambda h, b: h.update(
            {"X-Hub-Signature-256": "sha256=" + sign(b + b" ")}
        ),
        lambda h, b: h.pop("X-Hub-Signature-256"),
        # One good signature does not excuse a bad one.
        lambda h, b: h.update({"X-Gitea-Signature": sign(b, "guess")}),
    ],
    ids=[
        "wrong-secret",
        "wrong-algorithm",
        "not-hex",
        "other-body",
        "unsigned",
        "one-bad-of-two",
    ],
)
def test_forged_github_delivery_is_unauthenticated(mangle):
    body = github_push()
    headers = github_headers(body)
    mangle(headers, body)
    with pytest.raises(webhook.WebhookUnauthenticated) as err:
        parse(headers, body)
    assert err.value.code == 401


def test_body_changed_after_signing_is_refused():
    body = github_push()
    headers = github_headers(body)
    tampered = body.replace(AFTER.encode(), BEFORE.encode())
    with pytest.raises(webhook.WebhookUnauthenticated):
        parse(headers, tampered)


def test_an_app_without_secret_accepts_nothing():
    body = github_push()
    headers = github_headers(body)
    headers["X-Hub-Signature-256"] = (
        "sha256=" + hmac.new(b"", body, hashlib.sha256).hexdigest()
    )
    with pytest.raises(webhook.WebhookUnauthenticated):
        parse(headers, body, secret="")


def test_unauthenticated_garbage_is_401_not_400():
    """Nothing of the body is read before the signature is checked."""
    with pytest.raises(webhook.WebhookUnauthenticated):
        parse({"X-GitHub-Event": "push"}, b"{not json")


def test_oversized_is_413_before_anything_else():
    body = github_push(padding="x" * LIMIT)
    with pytest.raises(webhook.WebhookTooLarge) as err:
        parse({}, body)  # not even signed: the size comes first
    assert err.value.code == 413
    assert str(LIMIT) in str(err.value)


def test_body_at_the_limit_is_accepted():
    body = github_push()
    assert parse(github_headers(body), body, limit=len(body)).commit == AFTER


def test_ping_is_distinct():
    body = json.dumps(
        {"zen": "Keep it logically awesome.", "hook_id": 1}
    ).encode()
    result = parse(github_headers(body, event="ping"), body)
    assert isinstance(result, webhook.Ping)
    assert result.delivery_id == "72d3162e-cc78-11e3-81ab-4c9367dc0958"


def test_ping_must_be_signed_too():
    body = b'{"zen": "x"}'
    headers = github_headers(body, event="ping")
    headers["X-Hub-Signature-256"] = "sha256=" + sign(body, "guess")
    with pytest.raises(webhook.WebhookUnauthenticated):
        parse(headers, body)


def test_other_events_are_ignored_with_reason():
    body = b'{"action": "opened"}'
    result = parse(github_headers(body, event="pull_request"), body)
    assert isinstance(result, webhook.Ignored)
    assert "pull_request" in result.reason


def test_branch_delete_is_ignored_not_an_error():
    body = github_push(after=ZEROS, deleted=True)
    result = parse(github_headers(body), body)
    assert isinstance(result, webhook.Ignored)
    assert "deleted" in result.reason


def test_tag_push_is_ignored():
    body = github_push(ref="refs/tags/v1.0")
    result = parse(github_headers(body), body)
    assert isinstance(result, webhook.Ignored)
    assert "not a branch" in result.reason


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"\xff\xfe",
        b"[1, 2]",
        b'"refs/heads/main"',
        github_push(ref=None),
        github_push(ref="main"),
        github_push(ref="refs/heads/a..b"),
        github_push(ref="refs/heads/-x/../y"),
        github_push(ref="refs/heads/x y"),
        github_push(after=None),
        github_push(after=AFTER.upper()),
        github_push(after=AFTER[:12]),
        github_push(after=AFTER + "0"),
        github_push(after="--upload-pack=touch /tmp/x"),
        github_push(before="HEAD~1"),
    ],
    ids=lambda b: b[:40].decode("utf-8", "replace"),
)
def test_malformed_push_is_400(body):
    with pytest.raises(webhook.WebhookMalformed) as err:
        parse(github_headers(body), body)
    assert err.value.code == 400


def test_missing_event_header_is_malformed():
    body = github_push()
    headers = github_headers(body)
    del headers["X-GitHub-Event"]
    with pytest.raises(webhook.WebhookMalformed):
        parse(headers, body)


def test_disagreeing_event_headers_are_malformed():
    body = gitea_push()
    headers = gitea_headers(body)
    headers["X-Gitea-Event"] = "issues"
    with pytest.raises(webhook.WebhookMalformed):
        parse(headers, body)


def test_delivery_id_is_exposed_for_replay_checks():
    """A redelivery carries the same id: the caller refuses the second."""
    body = github_push()
    first = parse(github_headers(body), body)
    again = parse(github_headers(body), body)
    other = parse(github_headers(body, delivery="another-id"), body)
    assert first.delivery_id == again.delivery_id != other.delivery_id


def test_delivery_without_id_is_named_by_its_body():
    body = gitlab_push()
    headers = gitlab_headers()
    del headers["X-Gitlab-Event-UUID"]
    first = parse(headers, body)
    assert first.delivery_id == "sha256:" + hashlib.sha256(body).hexdigest()
    assert parse(headers, body).delivery_id == first.delivery_id


def test_hostile_delivery_id_is_malformed():
    body = github_push()
    with pytest.raises(webhook.WebhookMalformed):
        parse(github_headers(body, delivery="x" * 200), body)
    with pytest.raises(webhook.WebhookMalformed):
        parse(github_headers(body, delivery="a b\n"), body)


def test_gitlab_push_is_read():
    push = parse(gitlab_headers(), gitlab_push())
    assert push.forge == "gitlab"
    assert (push.branch, push.commit, push.before) == ("main", AFTER, BEFORE)
    assert push.pusher == "jsmith"
    assert push.delivery_id == "13792a34-cac6-4fda-95a8-c58e00a3954e"
    assert push.repository_urls == (
        "https://gitlab.example.com/mike/diaspora.git",
        "git@gitlab.example.com:mike/diaspora.git",
        "https://gitlab.example.com/mike/diaspora",
    )


def test_gitlab_idempotency_key_is_preferred():
    headers = gitlab_headers(**{"Idempotency-Key": "key-kept-on-retries"})
    assert parse(headers, gitlab_push()).delivery_id == "key-kept-on-retries"


@pytest.mark.parametrize("token", ["", "guess", SECRET + " ", SECRET[:-1]])
def test_gitlab_wrong_token_is_401(token):
    with pytest.raises(webhook.WebhookUnauthenticated):
        parse(gitlab_headers(token=token), gitlab_push())


def test_gitlab_system_hook_push_is_read():
    push = parse(gitlab_headers(event="System Hook"), gitlab_push())
    assert push.commit == AFTER


def test_gitlab_other_events_are_ignored():
    result = parse(
        gitlab_headers(event="Merge Request Hook"),
        b'{"object_kind": "merge_request"}',
    )
    assert isinstance(result, webhook.Ignored)
    tag = parse(
        gitlab_headers(event="Tag Push Hook"),
        gitlab_push(object_kind="tag_push", ref="refs/tags/v1"),
    )
    assert isinstance(tag, webhook.Ignored)


def test_gitlab_branch_delete_is_ignored():
    body = gitlab_push(after=ZEROS, checkout_sha=None)
    result = parse(gitlab_headers(), body)
    assert isinstance(result, webhook.Ignored)
    assert "deleted" in result.reason


def test_gitlab_malformed_is_400():
    with pytest.raises(webhook.WebhookMalformed):
        parse(gitlab_headers(), b"{")
    with pytest.raises(webhook.WebhookMalformed):
        parse(gitlab_headers(), gitlab_push(after="deadbeef"))


def test_gitlab_token_header_selects_the_token_scheme():
    """Sending the GitHub headers with the secret in X-Gitlab-Token is the
    GitLab scheme: the secret itself authenticates, nothing else."""
    body = github_push()
    headers = github_headers(body)
    headers["X-Hub-Signature-256"] = "sha256=" + "0" * 64
    headers["X-Gitlab-Token"] = "guess"
    with pytest.raises(webhook.WebhookUnauthenticated):
        parse(headers, body)


def test_push_from_an_authenticated_request():
    push = webhook.push_from_request("refs/heads/main", AFTER, "req-1", "ci")
    assert (push.branch, push.commit, push.forge) == ("main", AFTER, "api")
    assert (push.delivery_id, push.pusher) == ("req-1", "ci")


@pytest.mark.parametrize(
    "ref, commit",
    [
        ("main", AFTER),
        ("refs/tags/v1", AFTER),
        ("refs/heads/a..b", AFTER),
        ("refs/heads/main", "HEAD"),
        ("refs/heads/main", ZEROS),
        ("refs/heads/main", None),
        (None, AFTER),
    ],
)
def test_bad_push_request_is_400(ref, commit):
    with pytest.raises(webhook.WebhookMalformed):
        webhook.push_from_request(ref, commit, "req-1")


def test_form_encoded_delivery():
    """The hook's content type set to application/x-www-form-urlencoded:
    the JSON is the ``payload`` field, the signature is over the form."""
    body = urlparse.urlencode({"payload": github_push().decode()}).encode()
    headers = github_headers(body)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    assert parse(headers, body).commit == AFTER
    bad = b"payload=1&payload=2"
    headers = github_headers(bad)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    with pytest.raises(webhook.WebhookMalformed):
        parse(headers, bad)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "ref": st.sampled_from(["refs/heads/main", "refs/tags/x", ""]) | JSON,
        "after": st.sampled_from([AFTER, ZEROS, AFTER.upper()]) | JSON,
        "before": st.sampled_from([BEFORE, ZEROS]) | JSON,
        "deleted": JSON,
        "repository": JSON,
        "pusher": JSON,
        "project": JSON,
        "object_kind": st.just("push") | JSON,
    },
)
OUTCOMES = (webhook.Push, webhook.Ping, webhook.Ignored)


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    body=st.binary(max_size=200)
    | FIELDS.map(lambda d: json.dumps(d).encode()),
    event=st.sampled_from(["push", "ping", "issues", ""]),
    gitlab=st.booleans(),
)
def test_any_authenticated_body_is_answered_not_crashed(body, event, gitlab):
    """Whatever a holder of the secret sends: a result or a 400, never
    another exception (which would be a 500)."""
    if gitlab:
        headers = gitlab_headers(
            event="Push Hook" if event == "push" else event
        )
    else:
        headers = github_headers(body, event=event)
    try:
        result = parse(headers, body)
    except webhook.WebhookMalformed:
        return
    assert isinstance(result, OUTCOMES)
    if isinstance(result, webhook.Push):
        assert refs.is_commit(result.commit) and refs.is_valid_ref(result.ref)
