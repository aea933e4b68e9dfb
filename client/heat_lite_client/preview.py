"""``openstack stack promote --dry-run``: what a promotion would change,
from ``POST /v1/<project>/promotions/preview`` (the same body as the
promotion itself; nothing changes on the server).

The answer::

    {"preview": {"source": {"stack", "id", "project"},
                 "target": {"stack", "id", "project", "exists"},
                 "template_changed": bool,
                 "parameters": {name: {"current", "promoted"}},
                 "dropped": {section: {key: value}},
                 "resources": {"added", "deleted", "replaced", "updated",
                               "unchanged": [names]},
                 "verify": ...}}

shown as one field per part (the answer's keys): one line per change
in a table, the answer's own values with ``-f json`` / ``-f yaml``.
``dropped`` is what the target has now and would lose (its own
parameters and environment overlays, which the promotion does not carry
over), one ``section: key = value`` line each, or "nothing".
"""

import json

from cliff import columns

FIELDS = (
    "source",
    "target",
    "template_changed",
    "parameters",
    "dropped",
    "resources",
    "verify",
)
# Resource changes, from the most to the least disruptive.
RESOURCE_CHANGES = ("replaced", "deleted", "added", "updated", "unchanged")


def _value(value):
    """A value as the user typed it: JSON for anything but a string."""
    return value if isinstance(value, str) else json.dumps(value)


class _Lines(columns.FormattableColumn):
    """Lines of text in a table; the answer's own value in JSON/YAML."""

    def human_readable(self):
        return "\n".join(self.lines())

    def machine_readable(self):
        return self._value

    def lines(self):
        raise NotImplementedError


class StackColumn(_Lines):
    def lines(self):
        stack = self._value or {}
        where = "%s/%s" % (stack.get("project"), stack.get("stack"))
        if stack.get("id"):
            where += " (%s)" % stack["id"]
        if "exists" in stack:
            where += (
                ", updated in place"
                if stack["exists"]
                else ", does not exist: created"
            )
        return [where]


class ParametersColumn(_Lines):
    def lines(self):
        found = []
        for name, values in sorted((self._value or {}).items()):
            promoted = _value(values.get("promoted"))
            if "current" not in values or values["current"] is None:
                found.append("%s: %s (new)" % (name, promoted))
            elif values["current"] == values.get("promoted"):
                found.append("%s: %s (unchanged)" % (name, promoted))
            else:
                found.append(
                    "%s: %s -> %s"
                    % (name, _value(values["current"]), promoted)
                )
        return found


class DroppedColumn(_Lines):
    def lines(self):
        found = []
        for section, items in sorted((self._value or {}).items()):
            for key, value in sorted((items or {}).items()):
                found.append("%s: %s = %s" % (section, key, _value(value)))
        return found or ["nothing"]


class ResourcesColumn(_Lines):
    def lines(self):
        changes = self._value or {}
        return [
            "%s: %s" % (change, ", ".join(changes[change]))
            for change in RESOURCE_CHANGES
            if changes.get(change)
        ]


class VerifyColumn(_Lines):
    def lines(self):
        spec = self._value
        if not spec:
            return ["none (no gate)"]
        found = []
        for check in spec.get("checks", []):
            if check.get("type") == "output":
                found.append(
                    "output %s == %s"
                    % (check.get("output"), _value(check.get("equals")))
                )
            else:
                found.append(check.get("type", json.dumps(check)))
        if "timeout" in spec:
            found.append("within %s s" % spec["timeout"])
        return found


class TemplateColumn(_Lines):
    def lines(self):
        return ["yes" if self._value else "no (same template)"]


def display(preview):
    """(fields, values) of a ShowOne for the preview."""
    values = (
        StackColumn(preview.get("source")),
        StackColumn(preview.get("target")),
        TemplateColumn(preview.get("template_changed")),
        ParametersColumn(preview.get("parameters")),
        DroppedColumn(preview.get("dropped")),
        ResourcesColumn(preview.get("resources")),
        VerifyColumn(preview.get("verify")),
    )
    return FIELDS, values
