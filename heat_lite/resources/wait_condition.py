"""OS::Heat::WaitCondition: hold the stack until a handle is signalled.

Create (and an update, which waits again) completes once the handle has
recorded at least ``count`` signals and all of them are SUCCESS. A
FAILURE signal fails it at once with the FAILURE reasons joined by
``;``; ``timeout`` seconds without enough signals fail it with "<k> of
<count> received" (plus the reasons of the successes). Heat's messages
and exception names are kept, so the status reason reads the same.

The wait is a ``check_*_complete`` that reads the handle's stored signals
through ``lookup_data`` and answers ``PollDelay`` while it waits: a worker
thread is never held, and a stack may wait on many conditions at once.
"""

import json
import time

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.resources import base
from heat_lite.resources import constraints as c
from heat_lite.resources import properties as p
from heat_lite.resources import wait_condition_handle as wch

# Polls start quick (signals often arrive within a second) and back off
# so that a long wait costs few reads of the handle.
FIRST_POLL, MAX_POLL = 0.2, 2.0
CONF = conf.CONF


class WaitConditionFailure(base.ActionFailed):
    """A FAILURE signal arrived; the message is the failure reasons."""


class WaitConditionTimeout(base.ActionFailed):
    """Not enough signals before the timeout."""


class HandleNotFound(base.ActionFailed):
    """The ``handle`` property names no wait condition handle."""


def evaluate(signals, count, elapsed, timeout):
    """Decide a wait from the handle's signals; pure, for tests.

    :returns: True when done, False to keep waiting.
    :raises WaitConditionTimeout: once ``elapsed`` exceeds ``timeout``
        (checked first, as Heat does).
    :raises WaitConditionFailure: if any signal is not SUCCESS.
    """
    entries = list(signals.values())
    if elapsed > timeout:
        reasons = [e["reason"] for e in entries if e["status"] == wch.SUCCESS]
        message = "%d of %d received" % (len(reasons), count)
        if reasons:
            message += " - %s" % ";".join(reasons)
        raise WaitConditionTimeout(message)
    failures = [e["reason"] for e in entries if e["status"] != wch.SUCCESS]
    if failures:
        raise WaitConditionFailure(";".join(failures))
    return len(entries) >= count


def handle_candidates(reference, stack_name):
    """Resource names the ``handle`` reference may stand for.

    A handle's reference is its physical name ``<stack>-<name>-<12
    chars>``; knowing the stack's name, the resource name comes out
    unambiguous whatever dashes it holds. A plain name is accepted too.
    """
    names = []
    prefix = "%s-" % stack_name
    if (
        reference.startswith(prefix)
        and len(reference) > len(prefix) + 13
        and reference[-13] == "-"
    ):
        names.append(reference[len(prefix) : -13])
    names.append(reference)
    return names


class WaitCondition(base.Resource):
    """Heat's properties and attribute; see the module docstring."""

    properties_schema = {
        "handle": p.Schema(
            p.STRING,
            "A reference to the wait condition "
            "handle used to signal this wait condition.",
            required=True,
        ),
        "timeout": p.Schema(
            p.NUMBER,
            "The number of seconds to wait for "
            "the correct number of signals to arrive.",
            required=True,
            constraints=[c.Range(1, 43200)],
        ),
        "count": p.Schema(
            p.INTEGER,
            "The number of success signals that "
            "must be received before the stack creation "
            "process continues.",
            default=1,
            update_allowed=True,
            constraints=[c.Range(min=1)],
        ),
    }
    attributes_schema = {
        "data": p.Attribute(
            "JSON string containing data associated with "
            "wait condition signals sent to the handle.",
            type="string",
        ),
    }
    persist_resource_id_at_once = False

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        """Also refuse a ``count`` no handle can reach: a handle keeps at
        most ``[DEFAULT] max_signals_per_handle`` signals."""
        props = super().validate_properties(values, path, unresolved)
        count, limit = props.get("count"), CONF.max_signals_per_handle
        if isinstance(count, int) and count > limit:
            raise exception.StackValidationFailed(
                path="%s.count" % path,
                msg="%d is more than the %d signals a handle keeps "
                "(max_signals_per_handle)" % (count, limit),
            )
        return props

    def _handle_signals(self):
        """The handle's signals, read fresh from its stored data."""
        reference = self.properties["handle"]
        for name in handle_candidates(reference, self.stack.get("name")):
            data = self.lookup_data(name)
            if data is None:
                continue
            if "signals" not in data:
                raise ValueError(
                    "%s is not a valid wait condition handle." % name
                )
            return data["signals"] or {}
        raise HandleNotFound(
            "The wait condition handle %s was not found." % reference
        )

    def _start(self):
        self._handle_signals()  # fail now if the handle is wrong
        return {
            "started": time.monotonic(),
            "timeout": float(self.properties["timeout"]),
            "delay": FIRST_POLL,
        }

    # Drift: the state is its own record, changed only by heat_lite
    # (signals are its input, not drift; engine.drift).
    live_state = base.state_in_record

    def handle_create(self):
        # No physical ID, as in Heat: get_resource gives the name.
        return self._start()

    def handle_update(self, new_props, prop_diff):
        """Wait again (for the new ``count``) from now on."""
        self.properties = new_props
        return self._start()

    def _check(self, cookie):
        signals = self._handle_signals()
        elapsed = time.monotonic() - cookie["started"]
        if evaluate(
            signals, self.properties["count"], elapsed, cookie["timeout"]
        ):
            self.data_set(
                "data", {k: v.get("data") for k, v in signals.items()}
            )
            return True
        delay = min(
            cookie["delay"], max(cookie["timeout"] - elapsed, 0) + 0.05
        )
        cookie["delay"] = min(cookie["delay"] * 1.5, MAX_POLL)
        raise base.PollDelay(delay)

    check_create_complete = _check
    check_update_complete = _check

    def _resolve_attribute(self, name):
        if name != "data":
            return None
        if self.services.in_action:
            try:
                signals = self._handle_signals()
            except (HandleNotFound, ValueError):
                signals = None
            if signals is not None:
                return json.dumps(
                    {k: v.get("data") for k, v in signals.items()}
                )
        # Outside an engine action: what the handle held when the wait
        # completed.
        return json.dumps(self._data.get("data") or {})
