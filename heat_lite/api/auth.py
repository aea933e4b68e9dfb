"""Who is calling: the request context, from noauth headers or from the
identity headers keystonemiddleware sets after validating a token."""

import re
import urllib.parse

from heat_lite import conf
from heat_lite.api import faults
from heat_lite.common import context, exception

CONF = conf.CONF
ENV_KEY = "heat_lite.context"
_TENANT_RE = re.compile(r"^/v1(?:\.0)?/([^/]+)")
_SIGNAL_RE = re.compile(
    r"^/v1(?:\.0)?/[^/]+/stacks/[^/]+/[^/]+/resources/[^/]+/signal/?$"
)

# Routes that take no token (``request.no_token``): (method, path). A git
# server's push delivery carries its own credential, the signature the
# engine checks.
NO_TOKEN_ROUTES = (
    ("POST", re.compile(r"^/v1(?:\.0)?/[^/]+/apps/[^/]+/webhook/?$")),
)


def no_token_route(environ):
    """Whether the request is for one of ``NO_TOKEN_ROUTES``."""
    path = environ.get("PATH_INFO", "")
    method = environ.get("REQUEST_METHOD")
    return any(m == method and r.match(path) for m, r in NO_TOKEN_ROUTES)


def url_tenant(path):
    match = _TENANT_RE.match(path)
    return match.group(1) if match else None


def _roles(value):
    return [r.strip() for r in (value or "").split(",") if r.strip()]


class NoAuthContext:
    """noauth: the project comes from the URL, the user from X-Auth-User.

    Only safe on loopback; ``cmd.api`` refuses other addresses unless the
    operator forces it.
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        project = url_tenant(environ.get("PATH_INFO", ""))
        roles = _roles(environ.get("HTTP_X_ROLES")) or ["admin"]
        user = environ.get("HTTP_X_AUTH_USER") or "admin"
        environ[ENV_KEY] = context.RequestContext(
            user_id=user,
            user_name=user,
            project_id=project,
            roles=roles,
            is_admin="admin" in roles,
            request_id=environ.get("openstack.request_id"),
        )
        return self.app(environ, start_response)


class KeystoneContext:
    """keystone: the context from auth_token's headers; the project in
    the URL must be the token's project unless the caller is admin.

    The context keeps the caller's token: the engine keeps it, encrypted,
    for the operation the request starts (see ``engine.worker.caller``).
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get("HTTP_X_IDENTITY_STATUS") != "Confirmed":
            response = faults.json_response(
                401,
                faults.error_body(
                    401, "HTTPUnauthorized", "Authentication required"
                ),
            )
            return response(environ, start_response)
        roles = _roles(environ.get("HTTP_X_ROLES"))
        ctxt = context.RequestContext(
            user_id=environ.get("HTTP_X_USER_ID"),
            user_name=environ.get("HTTP_X_USER_NAME"),
            project_id=environ.get("HTTP_X_PROJECT_ID"),
            roles=roles,
            is_admin="admin" in roles,
            auth_token=environ.get("HTTP_X_AUTH_TOKEN"),
            request_id=environ.get("openstack.request_id"),
        )
        tenant = url_tenant(environ.get("PATH_INFO", ""))
        if tenant and tenant != ctxt.project_id and not ctxt.is_admin:
            exc = exception.InvalidTenant(
                target=tenant, actual=ctxt.project_id
            )
            return faults.exception_response(exc)(environ, start_response)
        if tenant and ctxt.is_admin:
            ctxt.project_id = tenant
        environ[ENV_KEY] = ctxt
        return self.app(environ, start_response)


class HandleTokens:
    """keystone: a wait condition handle's own token signals its handle.

    The in-guest agent of a server gets the handle's ``token`` (and
    ``curl_cli``), not a Keystone credential: heat_lite has no stack
    users to give it (Heat makes a Keystone user in a stack-user domain).
    A POST to a resource's signal URL whose ``X-Auth-Token`` is a handle
    token (it starts with ``HANDLE_TOKEN_PREFIX``, which no Keystone
    token does) skips keystonemiddleware and carries a context with no
    user and no roles, scoped to the URL's project, and the token; the
    engine delivers the signal only if the token is that very resource's
    (``resource_signal``). A POST without the header may carry the
    token in the URL instead (``?token=``: a software deployment's
    CFN_SIGNAL URL, which its agent POSTs to as it is, as it would to
    Heat's pre-signed URL). Any other request with such a token goes to
    keystonemiddleware, which refuses it. The token lives in the
    handle's data: it dies with the handle (its stack's delete, or an
    UpdateWaitConditionHandle's replacement).
    """

    def __init__(self, app, keystone_app):
        self.app = app
        self.keystone_app = keystone_app

    def __call__(self, environ, start_response):
        token = environ.get("HTTP_X_AUTH_TOKEN") or _query_token(environ)
        path = environ.get("PATH_INFO", "")
        if (
            token.startswith(context.HANDLE_TOKEN_PREFIX)
            and environ.get("REQUEST_METHOD") == "POST"
            and _SIGNAL_RE.match(path)
        ):
            environ[ENV_KEY] = context.RequestContext(
                user_id=None,
                project_id=url_tenant(path),
                roles=[],
                handle_token=token,
                request_id=environ.get("openstack.request_id"),
            )
            return self.app(environ, start_response)
        return self.keystone_app(environ, start_response)


class NoTokenRoutes:
    """The routes of ``NO_TOKEN_ROUTES`` skip authentication (noauth's
    and keystone's alike) and get a context with no user and no roles,
    scoped to the URL's project: whatever the request's headers say, it
    can do nothing but what its route does, and that route's handler
    checks no policy (``request.no_token``). Everything else goes to
    ``authenticated``."""

    def __init__(self, app, authenticated):
        self.app = app
        self.authenticated = authenticated

    def __call__(self, environ, start_response):
        if no_token_route(environ):
            environ[ENV_KEY] = context.RequestContext(
                user_id=None,
                project_id=url_tenant(environ.get("PATH_INFO", "")),
                roles=[],
                request_id=environ.get("openstack.request_id"),
            )
            return self.app(environ, start_response)
        return self.authenticated(environ, start_response)


def _query_token(environ):
    """The signal token of the query string, or ''."""
    query = urllib.parse.parse_qs(environ.get("QUERY_STRING") or "")
    return query.get(context.SIGNAL_TOKEN_PARAM, [""])[0]


def wrap(app):
    """Wrap ``app`` with the authentication chosen by configuration."""
    if CONF.api.auth_strategy == "keystone":
        from keystonemiddleware import auth_token

        return NoTokenRoutes(
            app,
            HandleTokens(
                app,
                auth_token.AuthProtocol(
                    KeystoneContext(app), {"oslo_config_config": CONF}
                ),
            ),
        )
    return NoTokenRoutes(app, NoAuthContext(app))
