"""Read a push delivered by a git server, and decide whether to trust it.

``parse_delivery(headers, body, secret, max_size)`` takes a webhook request
as it arrived (the raw body, before any JSON decoding: the signature is over
those bytes) and returns one of:

- ``Push``: an authenticated push of a branch to one commit;
- ``Ping``: an authenticated "hook installed" delivery (GitHub, Gitea,
  Forgejo send one), to be acknowledged with 200 and nothing else;
- ``Ignored``: authenticated, well formed, but nothing to build (another
  event, a tag, a deleted branch), with the reason;

or raises one exception per refusal, each carrying the HTTP code the API
answers with: ``WebhookTooLarge`` (413), ``WebhookUnauthenticated`` (401),
``WebhookMalformed`` (400). The order is fixed and matters: the size is
checked before anything is computed over the body, the signature before
anything of the body is read, so an unauthenticated caller learns nothing
but "too large" or "no".

Two ways of authenticating, as the servers send them:

- GitHub, Gitea, Forgejo (and Gogs): ``X-Hub-Signature-256: sha256=<hex>``,
  the HMAC-SHA256 of the raw body keyed with the secret; Gitea and Forgejo
  also send the same digest without prefix as ``X-Gitea-Signature`` /
  ``X-Forgejo-Signature``. Every signature header present must match.
- GitLab: ``X-Gitlab-Token``, the secret itself.

Comparisons use ``hmac.compare_digest``. Replays are the caller's to
refuse: ``delivery_id`` is the server's delivery id (GitHub keeps it on a
redelivery; GitLab's ``Idempotency-Key`` is kept across retries, its
``X-Gitlab-Event-UUID`` is used when no key is sent), or, when the server
sent none, ``sha256:<digest of the body>`` so that the same body twice is
still the same delivery.
"""

import dataclasses
import hashlib
import hmac
import json
import re
from urllib import parse

from heat_lite.apps import refs
from heat_lite.common import exception


class WebhookUnauthenticated(exception.NotAuthenticated):
    msg_fmt = "Webhook refused: %(reason)s"


class WebhookMalformed(exception.BadRequest):
    msg_fmt = "Malformed webhook delivery: %(reason)s"


class WebhookTooLarge(exception.RequestTooLarge):
    msg_fmt = (
        "Request is too large: a webhook delivery of %(size)d bytes, more "
        "than %(limit)d"
    )


@dataclasses.dataclass(frozen=True)
class Push:
    """One authenticated push of a branch."""

    ref: str
    branch: str
    commit: str
    before: str | None  # None for a new branch (all zeros) or not sent
    delivery_id: str
    repository_urls: tuple  # every clone/web URL the server named
    pusher: str | None
    forge: str  # "github" (also Gitea, Forgejo, Gogs), "gitlab" or "api"


@dataclasses.dataclass(frozen=True)
class Ping:
    """The delivery a server sends when the hook is created."""

    delivery_id: str
    forge: str


@dataclasses.dataclass(frozen=True)
class Ignored:
    """Authenticated and well formed, but nothing to build."""

    reason: str
    event: str
    delivery_id: str
    forge: str


# Event and delivery-id headers of the HMAC-signed family, in the order
# they are preferred (Gitea sends its own and GitHub's, with equal values).
_HUB_EVENTS = (
    "x-github-event",
    "x-gitea-event",
    "x-forgejo-event",
    "x-gogs-event",
)
_HUB_DELIVERIES = (
    "x-github-delivery",
    "x-gitea-delivery",
    "x-forgejo-delivery",
    "x-gogs-delivery",
)
_PREFIXED_SIGNATURE = "x-hub-signature-256"
_BARE_SIGNATURES = ("x-gitea-signature", "x-forgejo-signature")
_GITLAB_TOKEN = "x-gitlab-token"
_GITLAB_EVENT = "x-gitlab-event"
_GITLAB_DELIVERIES = ("idempotency-key", "x-gitlab-event-uuid")
# GitLab sends "System Hook" for pushes reported by system hooks.
_GITLAB_PUSH_EVENTS = ("Push Hook", "System Hook")

# Every header parse_delivery reads: what the API forwards to the engine.
HEADERS = (
    ("content-type", _PREFIXED_SIGNATURE, _GITLAB_TOKEN, _GITLAB_EVENT)
    + _HUB_EVENTS
    + _HUB_DELIVERIES
    + _BARE_SIGNATURES
    + _GITLAB_DELIVERIES
)

_HEX_SHA256 = re.compile(r"\A[0-9a-fA-F]{64}\Z")
_DELIVERY_ID = re.compile(r"\A[A-Za-z0-9._:-]{1,128}\Z")
_MAX_URLS = 8
_MAX_URL_LENGTH = 2048
_MAX_NAME_LENGTH = 255


def parse_delivery(headers, body, secret, max_size):
    """Authenticate and read one webhook delivery.

    :param headers: the request's headers, any mapping (names compared
        case-insensitively).
    :param body: the raw request body, bytes.
    :param secret: the app's webhook secret (str); an empty one accepts
        nothing.
    :param max_size: the largest body accepted, in bytes.
    :returns: Push, Ping or Ignored.
    :raises WebhookTooLarge, WebhookUnauthenticated, WebhookMalformed:
    """
    if len(body) > max_size:
        raise WebhookTooLarge(size=len(body), limit=max_size)
    headers = {str(k).lower(): str(v) for k, v in dict(headers).items()}
    if not secret:
        raise WebhookUnauthenticated(reason="the app has no webhook secret")
    key = secret.encode("utf-8")
    if _GITLAB_TOKEN in headers:
        _check_token(headers[_GITLAB_TOKEN], key)
        return _read_gitlab(headers, body)
    _check_signatures(headers, body, key)
    return _read_hub(headers, body)


def has_credential(headers):
    """Whether the request carries a signature or a token at all (the
    API refuses one without, 401, before asking the engine).

    :param headers: a mapping whose names are lowercase.
    """
    return any(
        h in headers
        for h in (_PREFIXED_SIGNATURE, _GITLAB_TOKEN) + _BARE_SIGNATURES
    )


def push_from_request(ref, commit, delivery_id, pusher=None):
    """The Push of an authenticated ``POST .../pushes {"ref", "commit"}``
    (a git hook or a CI job, with a Keystone token instead of a secret):
    the same checks as a webhook's push.

    :param delivery_id: the request's id, for the same replay checks.
    :raises WebhookMalformed: for a ref or commit that is not well formed,
        or a ref that is not a branch.
    """
    if not refs.is_valid_ref(ref) or not ref.startswith("refs/heads/"):
        raise WebhookMalformed(reason="'ref' is not refs/heads/<branch>")
    if not refs.is_commit(commit):
        raise WebhookMalformed(
            reason="'commit' is not a 40 or 64 digit lowercase commit id"
        )
    return Push(
        ref=ref,
        branch=refs.branch_of(ref),
        commit=commit,
        before=None,
        delivery_id=delivery_id,
        repository_urls=(),
        pusher=pusher,
        forge="api",
    )


def _check_token(token, key):
    # Digests of both sides: equal lengths, so not even the secret's
    # length shows in the time taken.
    given = hashlib.sha256(token.encode("utf-8", "replace")).digest()
    if not hmac.compare_digest(given, hashlib.sha256(key).digest()):
        raise WebhookUnauthenticated(reason="X-Gitlab-Token does not match")


def _check_signatures(headers, body, key):
    expected = hmac.new(key, body, hashlib.sha256).hexdigest()
    given = []
    if _PREFIXED_SIGNATURE in headers:
        value = headers[_PREFIXED_SIGNATURE]
        algo, _, digest = value.partition("=")
        if algo.strip().lower() != "sha256":
            raise WebhookUnauthenticated(
                reason="X-Hub-Signature-256 is not sha256=<hex>"
            )
        given.append((_PREFIXED_SIGNATURE, digest))
    given.extend((h, headers[h]) for h in _BARE_SIGNATURES if h in headers)
    if not given:
        raise WebhookUnauthenticated(reason="no signature or token")
    for name, digest in given:
        digest = digest.strip()
        # compare_digest needs equal kinds; a non-hex value simply fails.
        ok = _HEX_SHA256.match(digest) and hmac.compare_digest(
            digest.lower().encode("ascii"), expected.encode("ascii")
        )
        if not ok:
            raise WebhookUnauthenticated(
                reason="%s does not match the body" % name
            )


def _read_hub(headers, body):
    events = {headers[h].strip() for h in _HUB_EVENTS if h in headers}
    if len(events) != 1:
        raise WebhookMalformed(
            reason="expected one X-GitHub-Event/X-Gitea-Event/"
            "X-Forgejo-Event value, got %d" % len(events)
        )
    event = events.pop()
    delivery = _delivery_id(headers, _HUB_DELIVERIES, body)
    if event == "ping":
        return Ping(delivery_id=delivery, forge="github")
    if event != "push":
        return Ignored(
            "event %r is not a push" % event[:64], event, delivery, "github"
        )
    payload = _json_object(_form_payload(headers, body))
    repo = payload.get("repository") or {}
    pusher = payload.get("pusher") or {}
    return _push(
        payload,
        event=event,
        delivery=delivery,
        forge="github",
        urls=_urls(repo, ("clone_url", "ssh_url", "git_url", "html_url")),
        pusher=_name(pusher, ("name", "login", "username")),
    )


def _read_gitlab(headers, body):
    event = headers.get(_GITLAB_EVENT, "").strip()
    if not event:
        raise WebhookMalformed(reason="X-Gitlab-Event is missing")
    delivery = _delivery_id(headers, _GITLAB_DELIVERIES, body)
    if event not in _GITLAB_PUSH_EVENTS:
        return Ignored(
            "event %r is not a push" % event[:64], event, delivery, "gitlab"
        )
    payload = _json_object(body)
    kind = payload.get("object_kind", payload.get("event_name"))
    if kind != "push":
        return Ignored(
            "object_kind %r is not a push" % str(kind)[:64],
            event,
            delivery,
            "gitlab",
        )
    urls = _urls(
        payload.get("project") or {},
        ("git_http_url", "git_ssh_url", "web_url"),
    ) + _urls(
        payload.get("repository") or {},
        ("git_http_url", "git_ssh_url", "homepage"),
    )
    return _push(
        payload,
        event=event,
        delivery=delivery,
        forge="gitlab",
        urls=tuple(dict.fromkeys(urls)),
        pusher=_name(payload, ("user_username", "user_name")),
    )


def _push(payload, event, delivery, forge, urls, pusher):
    ref = payload.get("ref")
    if not refs.is_valid_ref(ref) or not ref.startswith("refs/"):
        raise WebhookMalformed(reason="'ref' is not a full ref name")
    after = payload.get("after")
    before = payload.get("before")
    if before is not None and not (
        refs.is_commit(before) or refs.is_zero_commit(before)
    ):
        raise WebhookMalformed(reason="'before' is not a commit id")
    if refs.is_zero_commit(after) or payload.get("deleted") is True:
        return Ignored("%s was deleted" % ref, event, delivery, forge)
    if not refs.is_commit(after):
        raise WebhookMalformed(
            reason="'after' is not a 40 or 64 digit lowercase commit id"
        )
    branch = refs.branch_of(ref)
    if branch is None:
        return Ignored("%s is not a branch" % ref, event, delivery, forge)
    return Push(
        ref=ref,
        branch=branch,
        commit=after,
        before=None if refs.is_zero_commit(before) else before,
        delivery_id=delivery,
        repository_urls=urls,
        pusher=pusher,
        forge=forge,
    )


def check_delivery_id(value, name="the delivery id"):
    """``value`` if it is a well formed delivery id (1 to 128 letters,
    digits and ``._:-``).

    :raises WebhookMalformed: otherwise.
    """
    if not isinstance(value, str) or not _DELIVERY_ID.match(value):
        raise WebhookMalformed(reason="%s is not a delivery id" % name)
    return value


def _delivery_id(headers, names, body):
    for name in names:
        value = headers.get(name, "").strip()
        if value:
            return check_delivery_id(value, name)
    return "sha256:" + hashlib.sha256(body).hexdigest()


def _form_payload(headers, body):
    """GitHub and Gitea can send the JSON form-encoded, as ``payload=``
    (the hook's "content type" setting); the signature is over the form."""
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        return body
    try:
        form = parse.parse_qs(
            body.decode("ascii"), strict_parsing=True, max_num_fields=16
        )
    except (UnicodeDecodeError, ValueError) as exc:
        raise WebhookMalformed(
            reason="the form body is not valid (%s)" % exc
        ) from None
    values = form.get("payload")
    if not values or len(values) != 1:
        raise WebhookMalformed(reason="the form has no single 'payload'")
    return values[0].encode("utf-8")


def _json_object(body):
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise WebhookMalformed(
            reason="the body is not JSON (%s)" % exc
        ) from None
    if not isinstance(payload, dict):
        raise WebhookMalformed(reason="the body is not a JSON object")
    return payload


def _urls(obj, keys):
    if not isinstance(obj, dict):
        return ()
    found = [obj.get(k) for k in keys]
    return tuple(
        dict.fromkeys(
            u
            for u in found
            if isinstance(u, str) and 0 < len(u) <= _MAX_URL_LENGTH
        )
    )[:_MAX_URLS]


def _name(obj, keys):
    if not isinstance(obj, dict):
        return None
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value[:_MAX_NAME_LENGTH]
    return None
