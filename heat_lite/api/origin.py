"""What a web page may make a browser send here.

Any page of any origin can make its visitor's browser send requests to
the API: a form, or a ``fetch`` in ``no-cors`` mode, POSTs a
``text/plain`` or form body to any address without asking first. With
DNS rebinding (a name of the attacker's that resolves to 127.0.0.1 once
the page has loaded) the page's own origin becomes this API's address,
and it reads the answers too. noauth trusts whoever reaches the port,
so without these checks any web page could drive a local heat_lite.
``Guard``, in front of everything but the fault barrier, refuses:

* in noauth, a ``Host`` that is none of the API's own names (403): the
  page's name, rebound. keystone mode needs no such check: a rebound
  page has neither a token nor the dashboard's cookie (a cookie belongs
  to the name it was set for);
* a state-changing request whose ``Origin`` is neither the API's own
  nor one of ``[api] allowed_origins`` (403);
* a body that is not ``application/json`` (415): browsers send that type
  to another origin only after a CORS preflight, which this API never
  grants (it sends no ``Access-Control-*`` header). The one exception is
  a webhook (``auth.NO_TOKEN_ROUTES``), which also takes
  ``application/x-www-form-urlencoded`` (GitHub's and Gitea's
  ``payload=`` form): a page can make a browser post such a form, but
  not with the signature header the engine requires, so it gets 401 and
  nothing is stored; the Host and Origin checks apply to it as to any
  other request.

Clients that are not browsers send no ``Origin``, python-heatclient and
the dashboard send JSON, and a request without a body needs no type.
keystone mode's dashboard keeps its own CSRF check
(``dashboard.session.check_csrf``) on top.
"""

import ipaddress
import socket
from urllib import parse

from heat_lite import conf
from heat_lite.api import auth, faults
from heat_lite.common import exception

CONF = conf.CONF
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
JSON = "application/json"
# What git servers send to a webhook (``auth.NO_TOKEN_ROUTES``).
WEBHOOK_TYPES = (JSON, "application/x-www-form-urlencoded")
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_WILDCARD = ("", "0.0.0.0", "::")
_ANY_PORT = "*"


def split_host(value):
    """``name``, ``name:port``, ``[v6]:port`` (a Host header or an
    option's entry) -> (name, port or None), the name lowercased without
    brackets or a trailing dot."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
    elif value.count(":") == 1:
        name, _, port = value.partition(":")
    else:  # a name, or an IPv6 address without brackets
        name, port = value, None
    return name.rstrip("."), port or None


def _is_address(name):
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Hosts:
    """The Host values noauth answers: its own addresses with its port,
    the host of the signal URL it hands out, ``[api] allowed_hosts``."""

    def __init__(self):
        port = self.port = str(CONF.api.bind_port)
        bind = split_host(CONF.api.bind_host)[0]
        # A wildcard bind answers on every address of the machine: any
        # address is the API's own (a page loaded from an address is
        # served by that address; only a name can be rebound).
        self.any_address = bind in _WILDCARD
        names = set(_LOOPBACK)
        names.add(socket.getfqdn().lower() if self.any_address else bind)
        self.allowed = {(name, port) for name in names}
        if port == "80":
            self.allowed |= {(name, None) for name in names}
        signal_url = CONF.heat_waitcondition_server_url
        if signal_url:
            parts = parse.urlsplit(signal_url)
            self.allowed.add(split_host(parts.netloc.rpartition("@")[2]))
        for entry in CONF.api.allowed_hosts:
            name, entry_port = split_host(entry)
            self.allowed.add((name, entry_port or _ANY_PORT))

    def __contains__(self, host):
        name, port = split_host(host)
        if (name, port) in self.allowed or (name, _ANY_PORT) in self.allowed:
            return True
        return self.any_address and port == self.port and _is_address(name)


def _origin(value):
    """An origin as browsers serialise it: ``scheme://host[:port]``."""
    parts = parse.urlsplit(value.strip().lower())
    return "%s://%s" % (parts.scheme, parts.netloc)


def _has_body(environ):
    if environ.get("HTTP_TRANSFER_ENCODING"):
        return True
    try:
        return int(environ.get("CONTENT_LENGTH") or 0) > 0
    except ValueError:
        return True  # a length that is no number: treat it as a body


def _media_type(environ):
    value = environ.get("CONTENT_TYPE") or ""
    return value.split(";", 1)[0].strip().lower()


class Guard:
    """WSGI middleware: the three refusals of the module docstring."""

    def __init__(self, app):
        self.app = app
        self.noauth = CONF.api.auth_strategy == "noauth"
        self.hosts = Hosts() if self.noauth else None
        self.origins = {_origin(o) for o in CONF.api.allowed_origins}

    def __call__(self, environ, start_response):
        try:
            self._check(environ)
        except exception.HeatLiteException:
            if _has_body(environ):
                # The body stays unread: close rather than read it.
                environ[faults.CLOSE_CONNECTION] = True
            raise
        return self.app(environ, start_response)

    def _check(self, environ):
        host = environ.get("HTTP_HOST")
        # HTTP/1.0 clients may send no Host; browsers always do.
        if self.noauth and host and host not in self.hosts:
            raise exception.HostNotAllowed(host=host)
        origin = environ.get("HTTP_ORIGIN")
        if (
            origin is not None
            and environ["REQUEST_METHOD"] not in SAFE_METHODS
            and not self._own_origin(origin, host)
        ):
            raise exception.CrossOriginRefused(origin=origin)
        allowed = WEBHOOK_TYPES if auth.no_token_route(environ) else (JSON,)
        if _has_body(environ) and _media_type(environ) not in allowed:
            raise exception.UnsupportedMediaType(
                content_type=environ.get("CONTENT_TYPE") or "none"
            )

    def _own_origin(self, origin, host):
        """The API's own origin (the page came from the Host the request
        is sent to), or an allowed one; ``null`` (a sandboxed frame, a
        file) is neither."""
        netloc = parse.urlsplit(origin.strip()).netloc
        if netloc and host and netloc.lower() == host.strip().lower():
            return True
        return _origin(origin) in self.origins


def wrap(app):
    return Guard(app)
