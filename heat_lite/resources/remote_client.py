"""The orchestration API of another cloud, for OS::Heat::Stack.

Which identity the calls are made with, first that applies:

* keystone mode with trusts: the stack's trust (the session of
  ``openstack.client.trust_session``), as Heat's RemoteStack uses the
  stack's own context. The endpoint comes from the catalog of
  the trust-scoped token, and every action -- polls, a delete long
  after the user's token was revoked -- works;
* the token of the caller who started the operation, when it was kept
  (and at a create's or update's validation, the token of the request),
  re-scoped at ``[remote_stack] token_auth_url`` (else, with no
  ``endpoint_override``, at ``[trustee] auth_url``) to get a catalog;
* the credentials configured in ``[remote_stack]``.

The session options come from ``[remote_stack]`` and the resource's
``context`` property (region, CA certificate, insecure). Every method
makes one bounded HTTP request and returns: the resource polls, it never
waits here.
"""

import hashlib
import os
import tempfile
import threading

from keystoneauth1 import adapter, loading, token_endpoint
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.conf import remote_stack as remote_conf

CONF = conf.CONF
_LOCK = threading.Lock()
# {verify: session} of the configured credentials (see _session).
_SESSIONS = {}


class RemoteError(exception.HeatLiteException):
    """The remote cloud refused a request or could not be reached."""

    msg_fmt = "%(message)s"


class _CallerToken(token_endpoint.Token):
    """The caller's token sent as it is, to ``endpoint_override``.

    It knows the caller's project, so that keystoneauth can fill in the
    ``%(project_id)s`` of ``endpoint_override``.
    """

    def __init__(self, endpoint, token, project_id):
        super().__init__(endpoint, token)
        self._project_id = project_id

    def get_project_id(self, session):
        return self._project_id


def _auth(request_context):
    """The caller's token if the operation has one, else the configured
    auth plugin.

    :raises RemoteError: if there is neither.
    """
    group = CONF[remote_conf.GROUP]
    token = getattr(request_context, "auth_token", None)
    if token:
        auth_url = group.token_auth_url or _trustee_auth_url()
        if auth_url:
            return v3.Token(
                auth_url=auth_url,
                token=token,
                project_id=request_context.project_id,
            )
        return _CallerToken(
            group.endpoint_override, token, request_context.project_id
        )
    auth = loading.load_auth_from_conf_options(CONF, remote_conf.GROUP)
    if auth is None:
        raise RemoteError(
            message="No credentials for the remote cloud: "
            "the operation carries no caller token (keystone "
            "mode with [DEFAULT] auth_encryption_key keeps "
            "it) and [remote_stack] auth_type is unset (use "
            "auth_type = none for a cloud without "
            "authentication)"
        )
    return auth


def _trustee_auth_url():
    """The Keystone of ``[trustee]`` when the catalog gives the endpoint
    (no ``endpoint_override``), else None."""
    if CONF[remote_conf.GROUP].endpoint_override:
        return None
    try:
        trustee = loading.load_auth_from_conf_options(CONF, "trustee")
    except ks_exc.ClientException:
        return None
    return getattr(trustee, "auth_url", None)


def _verify(context_prop):
    """requests' ``verify`` from the ``context`` property, or None to keep
    the session options' choice."""
    if context_prop.get("insecure"):
        return False
    cert = context_prop.get("ca_cert")
    if not cert:
        return None
    # One file per certificate, named by its digest: polls reuse it.
    path = os.path.join(
        tempfile.gettempdir(),
        "heat-lite-ca-%s.pem" % hashlib.sha256(cert.encode()).hexdigest()[:32],
    )
    if not os.path.exists(path):
        handle, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(handle, "w") as f:
            f.write(cert)
        os.replace(tmp, path)
    return path


def _new_session(request_context, verify):
    session = loading.load_session_from_conf_options(
        CONF, remote_conf.GROUP, auth=_auth(request_context)
    )
    if verify is not None:
        session.verify = verify
    return session


def _session(context_prop, request_context, trusted=None):
    """A keystoneauth1 session. One made from the configured credentials
    is kept (per ``verify`` choice) so that polls reuse its token instead
    of authenticating on every look; ``trusted`` is the stack's trust
    session (cached per trust by its owner)."""
    verify = _verify(context_prop)
    if trusted is not None:
        if verify is None:
            return trusted
        # The trust's auth (and its token), another certificate choice.
        return ks_session.Session(
            auth=trusted.auth, verify=verify, cert=trusted.cert
        )
    if getattr(request_context, "auth_token", None):
        return _new_session(request_context, verify)
    with _LOCK:
        session = _SESSIONS.get(verify)
        if session is None:
            session = _SESSIONS[verify] = _new_session(None, verify)
        return session


class RemoteHeat:
    """A few calls of the v1 API of the remote cloud, as dicts."""

    def __init__(self, context_prop, request_context=None, trusted=None):
        context_prop = context_prop or {}
        group = CONF[remote_conf.GROUP]
        session = _session(context_prop, request_context, trusted)
        self._as_caller = trusted is None and bool(
            getattr(request_context, "auth_token", None)
        )
        self._api = adapter.Adapter(
            session,
            service_type="orchestration",
            interface=group.interface,
            region_name=context_prop.get("region_name"),
            endpoint_override=group.endpoint_override,
        )

    def _request(self, method, path, body=None, missing_ok=False):
        try:
            response = self._api.request(
                path, method, json=body, raise_exc=False, redirect=False
            )
        except ks_exc.ClientException as exc:
            raise RemoteError(
                message="Remote orchestration API unreachable: %s" % exc
            ) from None
        if missing_ok and response.status_code == 404:
            return None
        if response.status_code == 401 and self._as_caller:
            raise RemoteError(
                message="%s (the token of the user who "
                "started this operation was refused; it may "
                "have expired: run the operation again)"
                % _error_text(response)
            )
        if response.status_code >= 400:
            raise RemoteError(
                message=_error_text(response),
                remote_message=_error_message(response),
            )
        if not response.content:
            return {}
        return response.json()

    def endpoint(self):
        """The remote endpoint's URL.

        :raises keystoneauth1.exceptions.ClientException: none found
            (``EndpointNotFound`` names the interface and region).
        """
        return self._api.get_endpoint()

    def validate(self, template, files, parameters):
        """Ask the remote endpoint to validate a template.

        :raises RemoteError: with the remote error's text.
        """
        self._request(
            "POST",
            "/validate",
            {"template": template, "files": files, "parameters": parameters},
        )

    def create(self, name, template, parameters, timeout_mins, files=None):
        """Start creating a stack; return its id. ``files`` is the
        ``files`` map its template (or its nested templates) read."""
        body = self._request(
            "POST",
            "/stacks",
            {
                "stack_name": name,
                "template": template,
                "parameters": parameters,
                "files": files or {},
                "timeout_mins": timeout_mins,
                "disable_rollback": True,
            },
        )
        return body["stack"]["id"]

    def update(
        self, name, stack_id, template, parameters, timeout_mins, files=None
    ):
        """Start converging the stack onto a new template/parameters."""
        self._request(
            "PUT",
            "/stacks/%s/%s" % (name, stack_id),
            {
                "template": template,
                "parameters": parameters,
                "files": files or {},
                "timeout_mins": timeout_mins,
                "disable_rollback": True,
            },
        )

    def delete(self, name, stack_id):
        """Start deleting the stack; False if it is already gone."""
        return (
            self._request(
                "DELETE", "/stacks/%s/%s" % (name, stack_id), missing_ok=True
            )
            is not None
        )

    def action(self, name, stack_id, action):
        """Start ``suspend``, ``resume`` or ``check``."""
        self._request(
            "POST", "/stacks/%s/%s/actions" % (name, stack_id), {action: None}
        )

    def get(self, name, stack_id):
        """The stack (with outputs), or None if it is gone."""
        body = self._request(
            "GET", "/stacks/%s/%s" % (name, stack_id), missing_ok=True
        )
        return body["stack"] if body is not None else None


def _error_message(response):
    """The ``message`` of Heat's JSON error body, or None."""
    try:
        return response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return None


def _error_text(response):
    """The message of Heat's JSON error body, else the HTTP status."""
    try:
        error = response.json()
        return "%s: %s" % (error["error"]["type"], error["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return (
            "HTTP %d from the remote orchestration API" % response.status_code
        )
