"""OS::Heat::TestResource: a configurable resource for testing the engine.

It waits (``wait_secs``, ``action_wait_secs``) by polling, never by
sleeping in a worker thread; it fails on demand (``fail``); it asks for
replacement (``update_replace``, ``update_replace_value``); adopt takes
over only a physical ID it made and has not deleted; ``poison`` names a
step of the plugin contract that raises an unexpected exception (a
ZeroDivisionError naming the step and ``value``), as a buggy plugin
would. When
``[engine] test_resource_ledger`` is set, every physical ID it creates or
deletes is appended to that file, so a test can check that nothing leaks;
and ``hold`` names a file beside it, ``<ledger>.hold-<hold>``, while which
exists every action waits (a test looks at an action in progress for as
long as it needs, then removes the file: no race with a timer).
"""

import os
import time
import uuid

from heat_lite import conf
from heat_lite.resources import base, constraints
from heat_lite.resources import properties as p

CONF = conf.CONF


def _ledger(event, physical_id):
    path = CONF.engine.test_resource_ledger
    if not path:
        return
    line = ("%s %s\n" % (event, physical_id)).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def held(name):
    """True while the hold file ``name`` exists (see the module)."""
    path = CONF.engine.test_resource_ledger
    return bool(name and path) and os.path.exists(hold_path(path, name))


def hold_path(ledger, name):
    """The hold file ``name`` beside ``ledger``."""
    return "%s.hold-%s" % (ledger, name)


def read_ledger(path):
    """Return (created, deleted) sets of physical IDs from a ledger."""
    created, deleted = set(), set()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                event, _, physical_id = line.strip().partition(" ")
                (created if event == "create" else deleted).add(physical_id)
    return created, deleted


POISON_STEPS = (
    "handle_create",
    "check_create_complete",
    "handle_update",
    "check_update_complete",
    "needs_replace",
    "handle_delete",
    "check_delete_complete",
    "attributes",
)


class TestResource(base.Resource):
    """See the module docstring; Heat's properties and attribute."""

    # Drift: the state is the record (engine.drift).
    live_state = base.state_in_record

    properties_schema = {
        "value": p.Schema(
            p.STRING,
            "The input string to be stored.",
            default="test_string",
            update_allowed=True,
        ),
        "fail": p.Schema(
            p.BOOLEAN,
            "Whether the action should fail.",
            default=False,
            update_allowed=True,
        ),
        "update_replace": p.Schema(
            p.BOOLEAN,
            "Replace (not update in place) when value changes.",
            default=False,
            update_allowed=True,
        ),
        "update_replace_value": p.Schema(
            p.STRING, "Any change replaces the resource."
        ),
        "wait_secs": p.Schema(
            p.NUMBER,
            "Seconds to wait after an action; -1 waits forever.",
            default=0,
            update_allowed=True,
        ),
        "action_wait_secs": p.Schema(
            p.MAP,
            "Per-action wait in seconds.",
            update_allowed=True,
            schema={
                k: p.Schema(p.NUMBER) for k in ("create", "update", "delete")
            },
        ),
        "attr_wait_secs": p.Schema(
            p.NUMBER,
            "Seconds to wait before resolving attributes.",
            default=0,
            update_allowed=True,
        ),
        "constraint_prop_secs": p.Schema(
            p.NUMBER, default=0, update_allowed=True
        ),
        "hold": p.Schema(
            p.STRING,
            "With a test resource ledger: every action waits while the "
            "file <ledger>.hold-<hold> exists.",
            default="",
            update_allowed=True,
            constraints=[constraints.AllowedPattern(r"[a-z0-9-]*")],
        ),
        "client_name": p.Schema(p.STRING, default="", update_allowed=True),
        "entity_name": p.Schema(p.STRING, default="", update_allowed=True),
        "poison": p.Schema(
            p.STRING,
            "Step that raises an unexpected exception (tests "
            "that a plugin bug fails the resource visibly).",
            default="",
            update_allowed=True,
            constraints=[constraints.AllowedValues(("",) + POISON_STEPS)],
        ),
    }
    attributes_schema = {"output": "The string that was stored."}

    def _wait_secs(self, action):
        per_action = self.properties.get("action_wait_secs") or {}
        if per_action.get(action) is not None:
            return per_action[action]
        return self.properties.get("wait_secs") or 0

    def _cookie(self, action):
        # attr_wait_secs delays the moment the attributes are available;
        # the engine reads them when the action completes, so the wait is
        # part of the (polled) action rather than a sleep in a worker.
        wait = self._wait_secs(action)
        if wait >= 0 and action != "delete":
            wait += self.properties.get("attr_wait_secs") or 0
        return {"start": time.time(), "wait": wait, "action": action}

    def _poisoned(self, step):
        """Raise what a buggy plugin would, if ``poison`` names ``step``."""
        if self.properties.get("poison") == step:
            raise ZeroDivisionError(
                "poisoned %s of %s" % (step, self.properties.get("value"))
            )

    def _failed(self):
        return ValueError("Test Resource failed %s" % self.name)

    def handle_create(self):
        self._poisoned("handle_create")
        if not self.properties.get("fail"):
            physical_id = "%s-%s" % (
                self.physical_resource_name(),
                uuid.uuid4().hex[:8],
            )
            self.resource_id_set(physical_id)
            _ledger("create", physical_id)
            self.data_set("value", self.properties.get("value"))
        return self._cookie("create")

    def handle_update(self, new_props, prop_diff):
        self.properties = new_props
        self._poisoned("handle_update")
        if "value" in prop_diff and new_props.get("value"):
            if new_props.get("update_replace"):
                raise base.UpdateReplace(self.name)
            self.properties = new_props
            if not new_props.get("fail"):
                self.data_set("value", new_props["value"])
            return self._cookie("update")
        self.properties = new_props
        return {"start": time.time(), "wait": 0, "action": "update"}

    def needs_replace(self, new_props, prop_diff):
        """A changed ``update_replace_value``, or a changed ``value`` with
        ``update_replace`` set (as Heat decides it, before any handler
        runs, so that preview update reports it as replaced)."""
        if new_props.get("poison") == "needs_replace":
            raise ZeroDivisionError(
                "poisoned needs_replace of %s" % new_props.get("value")
            )
        return "update_replace_value" in prop_diff or (
            "value" in prop_diff and bool(new_props.get("update_replace"))
        )

    def handle_adopt(self, resource_data):
        """Take over a physical ID: with a ledger, only one it created
        and has not deleted (an adopt of anything else fails)."""
        super().handle_adopt(resource_data)
        path = CONF.engine.test_resource_ledger
        if path:
            created, deleted = read_ledger(path)
            if self.resource_id not in created - deleted:
                raise ValueError(
                    "Test Resource %s does not exist" % self.resource_id
                )

    def find_created(self):
        """After a takeover: with a ledger, the physical ID an interrupted
        create wrote there (its stored ID, else one named after this
        record) and has not deleted; without one, the stored ID."""
        path = CONF.engine.test_resource_ledger
        if path:
            created, deleted = read_ledger(path)
            live = created - deleted
            prefix = self.physical_resource_name() + "-"
            found = (
                self.resource_id
                if self.resource_id in live
                else next(
                    (i for i in sorted(live) if i.startswith(prefix)), None
                )
            )
        else:
            found = self.resource_id
        if found is None:
            return None
        self.resource_id_set(found)
        self.data_set("value", self.properties.get("value"))
        return {"start": time.time(), "wait": 0, "action": "create"}

    def handle_delete(self):
        self._poisoned("handle_delete")
        return self._cookie("delete")

    def _check_complete(self, cookie):
        if held(self.properties.get("hold")):
            raise base.PollDelay(0.2)
        wait = cookie["wait"]
        elapsed = time.time() - cookie["start"]
        if wait < 0 or elapsed < wait:
            remaining = 1.0 if wait < 0 else wait - elapsed
            raise base.PollDelay(min(max(remaining, 0.01), 1.0))
        self._poisoned("check_%s_complete" % cookie["action"])
        if self.properties.get("fail") and cookie["action"] != "delete":
            raise self._failed()
        return True

    check_create_complete = _check_complete
    check_update_complete = _check_complete

    def check_delete_complete(self, cookie):
        self._check_complete(cookie)
        if self.resource_id and not self._already_deleted():
            _ledger("delete", self.resource_id)
        return True

    def _already_deleted(self):
        """Deleting something already gone succeeds and changes nothing:
        a delete retried after a takeover (its first run finished but was
        not recorded) is not logged twice."""
        path = CONF.engine.test_resource_ledger
        return bool(path) and self.resource_id in read_ledger(path)[1]

    def _resolve_attribute(self, name):
        if name == "output":
            self._poisoned("attributes")
            return self._data.get("value")
        return None
