"""The dashboard's Keystone session: login, who am I, logout, and the
cookie that stands in for ``X-Auth-Token`` on API requests.

The browser never sees the token: the server asks Keystone for it and
puts it in an ``HttpOnly``, ``SameSite=Strict`` cookie, which the page's
script cannot read. An API request that carries the cookie and no
``X-Auth-Token`` gets the token put back into its headers before
keystonemiddleware validates it, so the dashboard goes through exactly
the authentication, tenant checks and policy of every other client.

CSRF: every state-changing request authenticated by the cookie must
carry ``X-CSRF-Token``, a value derived one way from the token (an HMAC
keyed by a fixed label), which the page learns from ``GET session``. A
page of another origin can neither read it nor make the browser send
the cookie (SameSite=Strict); a request whose ``Origin`` names another
host is refused as well. Deriving the value from the token keeps the
server stateless: any API process, any worker, checks it alike.
"""

import base64
import datetime
import hashlib
import hmac
import http.cookies
from urllib import parse

from heat_lite import conf
from heat_lite.common import exception

CONF = conf.CONF
# keystoneauth1 is imported where a login needs it: a noauth API (the
# quick start) does not pay for its import at start-up.
COOKIE = "heat_lite_session"
CSRF_HEADER = "HTTP_X_CSRF_TOKEN"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
_CSRF_KEY = b"heat_lite dashboard csrf v1"
_LOGIN_KEYS = ("user", "password", "project", "domain")
# Enough for a Keystone call; the login form is not a long operation.
_TIMEOUT = 15


def csrf_token(token):
    """The CSRF value that goes with ``token`` (not the token: an HMAC
    of it, which does not reveal it)."""
    digest = hmac.new(_CSRF_KEY, token.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def cookie_token(environ):
    """The token in the session cookie, or None."""
    raw = environ.get("HTTP_COOKIE")
    if not raw:
        return None
    jar = http.cookies.SimpleCookie()
    try:
        jar.load(raw)
    except http.cookies.CookieError:
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel and morsel.value else None


def same_origin(environ):
    """False when an ``Origin`` (or, lacking it, a ``Referer``) header
    names another host than the one the request was sent to."""
    origin = environ.get("HTTP_ORIGIN") or environ.get("HTTP_REFERER")
    if not origin or origin == "null":
        return origin is None
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME")
    return parse.urlsplit(origin).netloc == host


def check_csrf(environ, token):
    """:raises Forbidden: a state-changing request without the right
    ``X-CSRF-Token`` or from another origin."""
    if environ["REQUEST_METHOD"] in SAFE_METHODS:
        return
    sent = environ.get(CSRF_HEADER) or ""
    if not hmac.compare_digest(sent, csrf_token(token)) or not same_origin(
        environ
    ):
        raise exception.Forbidden(
            message="The request was refused: missing or wrong CSRF token."
        )


def set_cookie_header(environ, token, max_age):
    """The ``Set-Cookie`` value keeping ``token`` (None: clearing it)."""
    parts = [
        "%s=%s" % (COOKIE, token or ""),
        "Path=/",
        "HttpOnly",
        "SameSite=Strict",
        "Max-Age=%d" % max(0, int(max_age)),
    ]
    if (
        environ.get("wsgi.url_scheme") == "https"
        or CONF.api.dashboard_secure_cookie
    ):
        parts.append("Secure")
    return "; ".join(parts)


def keystone_url():
    """The Keystone v3 URL the login form authenticates against."""
    url = CONF.api.dashboard_keystone_url
    if not url:
        try:
            url = CONF.keystone_authtoken.www_authenticate_uri
        except Exception:  # noqa: BLE001 - options absent: not configured
            url = None
    if not url:
        raise exception.ServiceUnavailable(
            message="The dashboard's Keystone URL is not configured "
            "([api] dashboard_keystone_url)."
        )
    url = url.rstrip("/")
    return url if url.endswith("/v3") else url + "/v3"


def _who(token_body):
    """What the page may show of a Keystone token body (never the
    token itself)."""
    project = token_body.get("project") or {}
    user = token_body.get("user") or {}
    return {
        "user": {
            "id": user.get("id"),
            "name": user.get("name"),
            "domain": (user.get("domain") or {}).get("name"),
        },
        "project": {"id": project.get("id"), "name": project.get("name")},
        "roles": sorted(r.get("name") for r in token_body.get("roles", ())),
        "expires_at": token_body.get("expires_at"),
    }


def _login_body(body):
    if not isinstance(body, dict) or set(body) - set(_LOGIN_KEYS):
        raise exception.BadRequest(
            message="A login takes user, password, project and domain."
        )
    for key in _LOGIN_KEYS:
        if not isinstance(body.get(key, ""), str):
            raise exception.BadRequest(message="%s must be a string" % key)
    if not body.get("user") or not body.get("password"):
        raise exception.BadRequest(message="User and password are required.")
    if not body.get("project"):
        raise exception.BadRequest(message="A project is required.")
    return body


def login(body):
    """Ask Keystone for a project-scoped token.

    :returns: (token, what the page may show, seconds until it expires).
    :raises NotAuthenticated: Keystone refused the credentials.
    :raises ServiceUnavailable: Keystone could not be reached.
    """
    from keystoneauth1 import exceptions as ks_exc
    from keystoneauth1 import session as ks_session
    from keystoneauth1.identity import v3

    body = _login_body(body)
    domain = body.get("domain") or "Default"
    plugin = v3.Password(
        auth_url=keystone_url(),
        username=body["user"],
        password=body["password"],
        user_domain_name=domain,
        project_name=body["project"],
        project_domain_name=domain,
    )
    sess = ks_session.Session(auth=plugin, timeout=_TIMEOUT)
    try:
        access = plugin.get_access(sess)
    except ks_exc.Unauthorized:
        raise exception.NotAuthenticated(
            message="The user, password, project or domain is wrong."
        ) from None
    except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout) as exc:
        raise exception.ServiceUnavailable(
            message="Keystone could not be reached: %s" % type(exc).__name__
        ) from None
    if not access.project_id:
        raise exception.NotAuthenticated(
            message="The token is not scoped to a project."
        )
    lifetime = access.expires - datetime.datetime.now(datetime.UTC)
    who = {
        "user": {
            "id": access.user_id,
            "name": access.username,
            "domain": access.user_domain_name,
        },
        "project": {"id": access.project_id, "name": access.project_name},
        "roles": sorted(access.role_names),
        "expires_at": access.expires.isoformat(),
    }
    return access.auth_token, who, lifetime.total_seconds()


def _self_request(method, token):
    """A request to /auth/tokens about ``token`` made with ``token``
    itself (a user may validate and revoke their own token)."""
    from keystoneauth1 import session as ks_session

    sess = ks_session.Session(timeout=_TIMEOUT)
    return sess.request(
        keystone_url() + "/auth/tokens",
        method,
        headers={"X-Auth-Token": token, "X-Subject-Token": token},
        authenticated=False,
        raise_exc=False,
    )


def whoami(token):
    """What the page may show about the session, or None when the token
    is no longer valid."""
    from keystoneauth1 import exceptions as ks_exc

    try:
        resp = _self_request("GET", token)
    except ks_exc.ConnectionError:
        raise exception.ServiceUnavailable(
            message="Keystone could not be reached."
        ) from None
    if resp.status_code != 200:
        return None
    return _who(resp.json().get("token", {}))


def revoke(token):
    """Revoke the token at logout; a Keystone that cannot be reached
    leaves it to expire (the cookie is cleared anyway)."""
    from keystoneauth1 import exceptions as ks_exc

    try:
        _self_request("DELETE", token)
    except ks_exc.ConnectionError:
        pass
