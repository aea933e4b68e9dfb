"""Example::Counter: a counter kept in a file, as a model plugin.

Each part of the heat_lite plugin API appears once:

* ``properties_schema`` with a required property, defaults, a constraint,
  ``update_allowed`` properties and an ``immutable`` one;
* ``attributes_schema`` and ``_resolve_attribute``;
* ``handle_create`` returning a cookie that ``check_create_complete``
  polls, raising ``PollDelay`` instead of sleeping;
* ``handle_update`` for in-place changes and ``needs_replace`` for the
  changes that need a new counter;
* ``handle_delete``, ``handle_check``, ``resource_id_set`` and
  ``data_set``.

The counter lives in ``<directory>/<physical id>``; its value and number
of updates are also kept in the resource's data, which heat_lite stores
with the resource, so attributes never need to read the file.
"""

import os
import time
import uuid

from heat_lite.resources import base, constraints
from heat_lite.resources import properties as p


class Counter(base.Resource):
    """A file holding a number that each in-place update advances."""

    properties_schema = {
        "directory": p.Schema(
            p.STRING,
            "Existing directory that holds the counter file. "
            "Changing it makes a new counter there.",
            required=True,
        ),
        "start": p.Schema(
            p.INTEGER,
            "First value. Raising it sets the counter to it in "
            "place; lowering it replaces the counter, which never goes "
            "backwards.",
            default=0,
            update_allowed=True,
        ),
        "step": p.Schema(
            p.INTEGER,
            "Amount added by each other in-place update.",
            default=1,
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=1000)],
        ),
        "ready_after": p.Schema(
            p.NUMBER,
            "Seconds the counter takes to become ready after it is made.",
            default=0,
            update_allowed=True,
            constraints=[constraints.Range(min=0, max=60)],
        ),
        "owner": p.Schema(
            p.STRING,
            "Who the counter belongs to; it may never change.",
            default="nobody",
            immutable=True,
        ),
    }
    attributes_schema = {
        "value": p.Attribute("The current value.", type="integer"),
        "updates": p.Attribute(
            "Number of in-place updates so far.", type="integer"
        ),
        "path": p.Attribute("The file holding the counter.", type="string"),
    }

    def _path(self, directory=None):
        return os.path.join(
            directory or self.properties["directory"], self.resource_id
        )

    def _write(self, value):
        with open(self._path(), "w") as f:
            f.write("%d\n" % value)
        self.data_set("value", value)

    def handle_create(self):
        # Record the physical ID before making the file: heat_lite stores
        # it at once, so the file can never be orphaned by a crash.
        self.resource_id_set("counter-%s" % uuid.uuid4().hex[:12])
        self._write(self.properties["start"])
        self.data_set("updates", 0)
        return time.time() + self.properties["ready_after"]

    def check_create_complete(self, ready_at):
        remaining = ready_at - time.time()
        if remaining > 0:
            raise base.PollDelay(min(remaining, 1.0))
        return True

    def needs_replace(self, new_props, prop_diff):
        if new_props["start"] < self.properties["start"]:
            return True
        return super().needs_replace(new_props, prop_diff)

    def handle_update(self, new_props, prop_diff):
        if "start" in prop_diff:
            value = new_props["start"]
        else:
            value = self._data["value"] + new_props["step"]
        self.properties = new_props
        self._write(value)
        self.data_set("updates", self._data.get("updates", 0) + 1)

    def handle_delete(self):
        if self.resource_id is None:
            return
        try:
            os.remove(self._path())
        except FileNotFoundError:
            pass  # already gone: deleting twice must succeed

    def handle_check(self):
        with open(self._path()) as f:
            stored = int(f.read())
        if stored != self._data["value"]:
            raise ValueError(
                "counter file holds %d, expected %d"
                % (stored, self._data["value"])
            )

    def _resolve_attribute(self, name):
        if name == "path":
            return self._path() if self.resource_id else None
        if name in ("value", "updates"):
            return self._data.get(name)
        return None
