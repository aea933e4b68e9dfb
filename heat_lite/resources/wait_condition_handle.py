"""OS::Heat::WaitConditionHandle: where servers report that they are ready.

A server (or anything else) POSTs a signal to the handle's URL. The
handle checks it and gives it Heat's defaults (``signal_entry``); the
engine keeps each signal in a row of its own (``db.signals``), in the
shape Heat keeps in the handle's metadata: ``{id: {"status", "reason",
"data"}}``, in arrival order, a signal with a known id replacing the
earlier one. An ``OS::Heat::WaitCondition`` polls them: they reach it as
the ``signals`` of the handle's data (``lookup_data``), which the handle
itself stores empty; ``openstack stack resource metadata`` shows them in
the handle's metadata. A signal is at most ``[DEFAULT] max_signal_size``
bytes and a handle keeps at most ``[DEFAULT] max_signals_per_handle``
distinct ids (issue 26: before, each signal rewrote all the others).

The engine never sees an HTTP request, so the signal URL is built from
``[DEFAULT] heat_waitcondition_server_url`` (else from the API's bind
address). With the default ``TOKEN_SIGNAL`` transport the handle also
makes a random token and offers a ready ``curl`` command line. Heat's
token is a Keystone token of a user it creates in a stack-user domain;
heat_lite makes no Keystone users: with ``auth_strategy = keystone`` the
API takes the handle's own token on the signal route of that handle and
nowhere else (``api.auth.HandleTokens``, checked by
``signal_token_matches``), so an in-guest agent holding it can signal
this handle and do nothing else. The token is kept in the handle's data
and goes with it (stack delete, or the replacement of an
UpdateWaitConditionHandle). It does not expire as Heat's does (a
Keystone token lasts an hour). With ``noauth`` any caller may signal.
"""

import hmac
import json
import secrets
import socket
import urllib.parse

from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.resources import base
from heat_lite.resources import constraints as c
from heat_lite.resources import properties as p

CONF = conf.CONF

TRANSPORTS = (
    "CFN_SIGNAL",
    "TEMP_URL_SIGNAL",
    "HEAT_SIGNAL",
    "NO_SIGNAL",
    "ZAQAR_SIGNAL",
    "TOKEN_SIGNAL",
)
# heat_lite has no CloudFormation API, Swift or Zaqar to hand out.
UNSUPPORTED = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "ZAQAR_SIGNAL")
SUCCESS, FAILURE = "SUCCESS", "FAILURE"
SIGNAL_KEYS = ("data", "reason", "status", "id")
# The longest signal id (the key of its row).
MAX_SIGNAL_ID = 255


def signal_base_url():
    """The API base URL (no trailing slash) that signals are sent to."""
    url = CONF.heat_waitcondition_server_url
    if url:
        return url.rstrip("/")
    host = CONF.api.bind_host
    if host in ("", "0.0.0.0", "::"):
        host = socket.getfqdn()
    if ":" in host:
        host = "[%s]" % host
    return "http://%s:%d" % (host, CONF.api.bind_port)


def signal_url(stack, resource_name):
    """``<base>/v1/<project>/stacks/<name>/<id>/resources/<r>/signal``."""
    parts = [
        stack.get("tenant") or stack.get("project_id"),
        "stacks",
        stack.get("name"),
        stack.get("id"),
        "resources",
        resource_name,
        "signal",
    ]
    return "%s/v1/%s" % (
        signal_base_url(),
        "/".join(urllib.parse.quote(str(part), safe="") for part in parts),
    )


def normalise_signal(details, count):
    """Heat's defaults for a signal body; ``count`` = signals so far.

    :returns: (id, {"status", "reason", "data"}).
    :raises Invalid: for a body that is not a map of the known keys, a
        status other than SUCCESS and FAILURE, or an id longer than
        ``MAX_SIGNAL_ID``.
    """
    if details is None:
        details = {}
    if not isinstance(details, dict) or set(details) - set(SIGNAL_KEYS):
        raise exception.Invalid(message="Metadata format invalid")
    number = count + 1
    entry = {
        "status": details.get("status", SUCCESS),
        "reason": details.get("reason", "Signal %d received" % number),
        "data": details.get("data"),
    }
    if entry["status"] not in (SUCCESS, FAILURE):
        raise exception.Invalid(message="Metadata format invalid")
    key = str(details.get("id", number))
    if len(key) > MAX_SIGNAL_ID:
        raise exception.Invalid(
            message="Signal id longer than %d characters" % MAX_SIGNAL_ID
        )
    return key, entry


class WaitConditionHandle(base.Resource):
    """Heat's property and attributes; see the module docstring."""

    properties_schema = {
        "signal_transport": p.Schema(
            p.STRING,
            "How the client will signal the wait condition. "
            "TOKEN_SIGNAL: an HTTP POST to the signal URL with the token "
            "given; HEAT_SIGNAL: the resource-signal API with the caller's "
            "own credentials; NO_SIGNAL: no credentials are made. "
            "CFN_SIGNAL, TEMP_URL_SIGNAL and ZAQAR_SIGNAL are not "
            "available in heat_lite.",
            default="TOKEN_SIGNAL",
            constraints=[c.AllowedValues(TRANSPORTS)],
        ),
    }
    attributes_schema = {
        "token": p.Attribute(
            "Token which can be used for signalling the "
            "handle when signal_transport is TOKEN_SIGNAL. "
            "None for other transports.",
            type="string",
        ),
        "endpoint": p.Attribute(
            "URL which can be used for signalling the "
            "handle when signal_transport is "
            "TOKEN_SIGNAL. None for other transports.",
            type="string",
        ),
        "curl_cli": p.Attribute(
            "A curl command line prefix to signal the handle when "
            "signal_transport is TOKEN_SIGNAL: add --data-binary "
            '\'{"status": "SUCCESS"}\' (or FAILURE). None for other '
            "transports.",
            type="string",
        ),
        "signal": p.Attribute(
            "JSON serialized map of what a client needs "
            "to signal this handle; its contents depend "
            "on signal_transport.",
            type="string",
        ),
    }
    persist_resource_id_at_once = False

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        if props.get("signal_transport") in UNSUPPORTED:
            raise exception.StackValidationFailed(
                path="%s.signal_transport" % path,
                msg="%s is not supported by heat_lite; use TOKEN_SIGNAL, "
                "HEAT_SIGNAL or NO_SIGNAL" % props["signal_transport"],
            )
        return props

    # Drift: the state is its own record, changed only by heat_lite
    # (signals are its input, not drift; engine.drift).
    live_state = base.state_in_record

    def handle_create(self):
        transport = self.properties.get("signal_transport")
        if transport in ("TOKEN_SIGNAL", "HEAT_SIGNAL"):
            self.data_set("endpoint", signal_url(self.stack, self.name))
        if transport == "TOKEN_SIGNAL":
            self.data_set(
                "token",
                context.HANDLE_TOKEN_PREFIX + secrets.token_urlsafe(32),
            )
        self.data_set("signals", {})
        self.resource_id_set(self.physical_resource_name())

    def signal_entry(self, details, count):
        """One signal as the engine keeps it (instead of ``handle_signal``:
        the engine stores it in a row of its own).

        :param count: the distinct signals the handle keeps so far.
        :returns: (id, {"status", "reason", "data"}, the SIGNAL event's
            reason).
        :raises Invalid: for a malformed signal (``normalise_signal``).
        """
        key, entry = normalise_signal(details, count)
        reason = "Signal: status:%s reason:%s" % (
            entry["status"],
            entry["reason"],
        )
        return key, entry, reason

    def handle_adopt(self, resource_data):
        """Adopted with the data it had: the signals it kept stay in the
        metadata of the abandon data (Heat's place for them); the data's
        map, which older exports filled, is emptied: the engine keeps
        signals in rows of their own."""
        super().handle_adopt(resource_data)
        self.data_set("signals", {})

    def signal_token_matches(self, token):
        """True when ``token`` is this TOKEN_SIGNAL handle's token."""
        mine = self._data.get("token") if self._token_signal() else None
        return bool(mine) and hmac.compare_digest(mine, token)

    def _token_signal(self):
        return self.properties.get("signal_transport") == "TOKEN_SIGNAL"

    def _signal_details(self):
        transport = self.properties.get("signal_transport")
        if transport == "TOKEN_SIGNAL":
            return {
                "endpoint": self._data.get("endpoint"),
                "token": self._data.get("token"),
            }
        if transport == "HEAT_SIGNAL":
            return {
                "endpoint": self._data.get("endpoint"),
                "project_id": self.stack.get("tenant"),
                "stack_id": self.stack.get("id"),
                "resource_name": self.name,
            }
        return {}

    def _resolve_attribute(self, name):
        if not self.resource_id:
            return None
        if name == "signal":
            return json.dumps(self._signal_details(), sort_keys=True)
        if not self._token_signal():
            return None
        token, endpoint = self._data.get("token"), self._data.get("endpoint")
        if name == "token":
            return token
        if name == "endpoint":
            return endpoint
        if name == "curl_cli" and token and endpoint:
            return (
                "curl -i -X POST -H 'X-Auth-Token: %s' "
                "-H 'Content-Type: application/json' "
                "-H 'Accept: application/json' %s" % (token, endpoint)
            )
        return None


class UpdateWaitConditionHandle(WaitConditionHandle):
    """OS::Heat::UpdateWaitConditionHandle: a handle replaced on every
    update of its stack, whether or not its own definition changed.

    The new handle has a new physical ID (and token), so a wait
    condition whose ``handle`` refers to it is replaced too and waits
    for fresh signals: servers configured on each update report again.
    """

    always_update = True

    def handle_update(self, new_props, prop_diff):
        raise base.UpdateReplace(self.name)
