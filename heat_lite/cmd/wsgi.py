"""Serving the API over HTTP with cheroot (threads, no eventlet)."""

import ipaddress
import logging
import socket

from cheroot import wsgi

from heat_lite import conf
from heat_lite.cmd import preflight

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def is_loopback(host):
    """True if ``host`` (an address or a name) only resolves to loopback."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(
            ipaddress.ip_address(i[4][0]).is_loopback for i in infos
        )


def check_bind():
    """noauth lets anyone act as any project: loopback only, unless the
    operator sets ``[api] allow_insecure_noauth``."""
    if (
        CONF.api.auth_strategy == "noauth"
        and not is_loopback(CONF.api.bind_host)
        and not CONF.api.allow_insecure_noauth
    ):
        raise preflight.StartupError(
            "auth_strategy=noauth refuses to listen on %s: use a "
            "loopback bind_host, auth_strategy=keystone, or set "
            "allow_insecure_noauth=true" % CONF.api.bind_host
        )


def make_server(app):
    check_bind()
    server = wsgi.Server(
        (CONF.api.bind_host, CONF.api.bind_port),
        app,
        numthreads=CONF.api.threads,
        server_name="heat_lite",
    )
    return server
