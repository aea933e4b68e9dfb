"""A poll the cloud does not answer is tried again; it does not fail.

Every ``check_*_complete`` of the OpenStack types is wrapped by
``polled``, and the engine asks ``wait_after`` about an error raised
while it finishes an action (reading the attributes it caches asks the
cloud again: a server's ports, a port's subnets). When the cloud gives
no answer -- the connection is reset, refused or times out (requests'
``ConnectionError`` and ``Timeout``, keystoneauth1's ``ConnectFailure``
and ``ConnectTimeout``, a bare ``ConnectionError`` such as
``ConnectionResetError``), or it answers 500, 502, 503 or 504 -- the
resource has not failed (500 too, as Heat's Nova plugin polls a server:
a loaded Nova answers a list with "Unexpected API Error" now and then,
seen in the 100-app benchmark): the check raises ``NoAnswer`` (a
``PollDelay``), so the engine polls it again later, with pauses that
double from 0.5 s to 10 s, until ``[openstack] transient_retry_timeout``
has passed since the first unanswered poll in a row; then the resource
fails with the error. An answered poll starts the count afresh.

Only a request that may be sent twice is tried again: an idempotent
method (GET, HEAD, OPTIONS, PUT, DELETE; RFC 9110 9.2.2) or Keystone's
token request (a session logging in again). A check that sends a POST
(a resize, a confirm, an interface attach) that gets no answer cannot
know whether it happened, and sending it again could do it twice: that
error fails the resource, as does every error of a ``handle_*`` call,
which this never wraps (a create is never sent twice). An error that
does not say which request it is about (a bare socket error) counts as
the poll's own: ``check_*_complete`` is a poll.
"""

import functools
import logging
import time

import requests
from keystoneauth1 import exceptions as ks_exc

from heat_lite import conf
from heat_lite.resources import base

CONF = conf.CONF
LOG = logging.getLogger(__name__)

STATUSES = frozenset([500, 502, 503, 504])
IDEMPOTENT = frozenset(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"])
FIRST_WAIT = 0.5
MAX_WAIT = 10.0
_NO_ANSWER = (
    ConnectionError,  # the builtin: reset, refused, aborted, broken pipe
    ks_exc.RetriableConnectionFailure,  # ConnectFailure, ConnectTimeout
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
)
_NOT_TRANSIENT = (ks_exc.SSLError, requests.exceptions.SSLError)


class NoAnswer(base.PollDelay):
    """The cloud did not answer a poll: ask again in ``seconds``."""


def _chain(exc):
    """``exc`` and the exceptions it was raised from or while handling."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def request_of(exc):
    """(method, url) of the HTTP request ``exc`` is about, or (None,
    None). keystoneauth1 raises ConnectFailure while handling requests'
    ConnectionError, which carries the request; an HTTP error carries
    its response's."""
    for link in _chain(exc):
        request = getattr(link, "request", None)
        if request is None:
            request = getattr(getattr(link, "response", None), "request", None)
        if getattr(request, "method", None):
            return request.method.upper(), request.url
        if isinstance(getattr(link, "method", None), str):
            return link.method.upper(), getattr(link, "url", None)
    return None, None


def _status(exc):
    for name in ("status_code", "http_status"):
        value = getattr(exc, name, None)
        if isinstance(value, int):
            return value
    return None


def is_transient(exc):
    """True if ``exc`` says the cloud did not answer a request that may
    be sent again (see the module docstring)."""
    if isinstance(exc, _NOT_TRANSIENT):
        return False
    if not isinstance(exc, _NO_ANSWER) and _status(exc) not in STATUSES:
        return False
    method, url = request_of(exc)
    if method is None or method in IDEMPOTENT:
        return True
    return method == "POST" and (url or "").rstrip("/").endswith(
        "/auth/tokens"
    )


def polled(check):
    """Wrap a ``check_*_complete``: an unanswered poll raises NoAnswer.

    The run of unanswered polls is counted on the plugin (a plugin
    object lives as long as its action)."""

    @functools.wraps(check)
    def wrapper(plugin, *args, **kwargs):
        try:
            result = check(plugin, *args, **kwargs)
        except NoAnswer:
            raise  # an inner check (a super() call) counted it already
        except Exception as exc:
            wait = wait_after(plugin, exc, check.__name__)
            if wait is None:
                raise
            raise NoAnswer(wait) from exc
        _runs(plugin).pop(check.__name__, None)
        return result

    wrapper.polled = True
    return wrapper


def _runs(plugin):
    """{what was asked: its run of unanswered asks} of ``plugin``."""
    runs = plugin.__dict__.get("_unanswered")
    if runs is None:
        runs = plugin.__dict__["_unanswered"] = {}
    return runs


def wait_after(plugin, exc, what="its attributes"):
    """Seconds until ``plugin`` asks the cloud again after ``exc``, or
    None: the action fails with ``exc``. Each ``what`` (a check, the
    attributes) counts its own run of unanswered asks, so that an
    answered check does not restart the count of unanswered reads of
    the attributes that follow it."""
    runs = _runs(plugin)
    if not is_transient(exc):
        runs.pop(what, None)
        return None
    now = time.monotonic()
    run = runs.setdefault(what, {"since": now, "wait": FIRST_WAIT})
    if now - run["since"] >= CONF.openstack.transient_retry_timeout:
        runs.pop(what, None)
        return None
    wait = run["wait"]
    run["wait"] = min(wait * 2, MAX_WAIT)
    LOG.warning(
        "%s %s (%s): the cloud did not answer %s (%s); polling again in %.1fs",
        plugin.type_name,
        plugin.name,
        plugin.resource_id,
        what,
        exc,
        wait,
    )
    return wait
