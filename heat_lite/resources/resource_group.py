"""OS::Heat::ResourceGroup and OS::Heat::ResourceChain: a nested stack of
members named "0", "1", ... built from one definition (group) or a list
of types (chain)."""

import copy
import json
import time

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.common.states import Action
from heat_lite.resources import (
    base,
    constraints,
    group_batches,
    stack_resource,
)
from heat_lite.resources import properties as p

_ATTRIBUTES = {
    "refs": p.Attribute("The reference ids of the members, in order.", "LIST"),
    "refs_map": p.Attribute("A map of member name to reference id.", "MAP"),
    "attributes": p.Attribute(
        "A map of member name to the attribute named by the path.", "MAP"
    ),
    "removed_rsrc_list": p.Attribute(
        "Members removed by removal policies.", "LIST"
    ),
}


class _Members(stack_resource.StackResource):
    """Attributes shared by groups and chains."""

    attributes_schema = _ATTRIBUTES

    def member_names(self):
        raise NotImplementedError

    def _members(self):
        if not self.resource_id or self.nested_stacks is None:
            return {}
        return self.nested_stacks.members(self.resource_id)

    def get_attribute(self, name, path=()):
        members = self._members()
        names = [n for n in self.member_names() if n in members]
        if name == "refs":
            value = [members[n][0] for n in names]
        elif name == "refs_map":
            value = {n: members[n][0] for n in names}
        elif name == "removed_rsrc_list":
            value = list(self.data().get("removed", []))
        elif name == "attributes":
            if not path:
                return None
            return {n: members[n][1].get(path[0]) for n in names}
        elif name.startswith("resource."):
            parts = name.split(".", 2)[1:] + list(path)
            member = members.get(str(parts[0]))
            if member is None:
                return None
            value, path = (
                (member[1].get(parts[1]), parts[2:])
                if len(parts) > 1
                else (member[0], ())
            )
        elif name == "show":
            value = None
        else:
            value = [members[n][1].get(name) for n in names]
        return base.dig(value, path)

    def _resolve_attribute(self, name):
        return self.get_attribute(name)


def _replace_index(value, index_var, index):
    if isinstance(value, str):
        return value.replace(index_var, index)
    if isinstance(value, list):
        return [_replace_index(v, index_var, index) for v in value]
    if isinstance(value, dict):
        return {
            k: _replace_index(v, index_var, index) for k, v in value.items()
        }
    return value


class ResourceGroup(_Members):
    """``count`` copies of ``resource_def``; see heat.md §5.6."""

    properties_schema = {
        "count": p.Schema(
            p.INTEGER,
            "Number of members.",
            default=1,
            update_allowed=True,
            constraints=[constraints.Range(min=0)],
        ),
        "index_var": p.Schema(
            p.STRING,
            "Replaced by the member name in the member properties.",
            default="%index%",
            update_allowed=True,
            constraints=[constraints.Length(min=3)],
        ),
        "resource_def": p.Schema(
            p.MAP,
            "The member definition.",
            required=True,
            update_allowed=True,
            schema={
                "type": p.Schema(p.STRING, required=True),
                "properties": p.Schema(p.MAP),
                "metadata": p.Schema(p.MAP),
            },
        ),
        "removal_policies": p.Schema(
            p.LIST,
            "Members to remove; their names are never reused.",
            default=[],
            update_allowed=True,
            schema={"resource_list": p.Schema(p.LIST, default=[])},
        ),
        "removal_policies_mode": p.Schema(
            p.STRING,
            "append or update the stored removal list.",
            default="append",
            update_allowed=True,
            constraints=[constraints.AllowedValues(["append", "update"])],
        ),
    }

    def _removed(self):
        """Names removed for good (stored, extended per the mode)."""
        stored = (
            []
            if self.properties.get("removal_policies_mode") == "update"
            else list(self.data().get("removed", []))
        )
        for policy in self.properties.get("removal_policies") or []:
            for name in policy.get("resource_list") or []:
                if str(name) not in stored:
                    stored.append(str(name))
        return stored

    def member_names(self):
        removed = set(self.data().get("removed", []))
        count = self.properties.get("count") or 0
        limit = conf.CONF.max_resources_per_stack
        if limit != -1 and count > limit:
            # Known only now (a count from an attribute): refuse before
            # making the names.
            raise exception.RequestLimitExceeded(
                message="Maximum resources per stack exceeded."
            )
        names, i = [], 0
        while len(names) < count:
            if str(i) not in removed:
                names.append(str(i))
            i += 1
        return names

    def _definitions(self):
        """{member name: definition} of the current properties, in order."""
        definition = self.properties["resource_def"]
        index_var = self.properties.get("index_var") or "%index%"
        result = {}
        for name in self.member_names():
            member = {"type": definition["type"]}
            for key in ("properties", "metadata"):
                if definition.get(key):
                    member[key] = _replace_index(
                        copy.deepcopy(definition[key]), index_var, name
                    )
            result[name] = member
        return result

    def child_template(self, policy_key="batch_create"):
        """Every member; each batch depends on the one before."""
        self.data_set("removed", self._removed())
        members = self._definitions()
        rules = group_batches.policy(self.update_policy, policy_key)
        size = group_batches.batch_size(len(members), rules)
        previous = []
        for batch in group_batches.chunks(list(members), size):
            for name in batch:
                if previous:
                    members[name]["depends_on"] = list(previous)
            previous = batch if size else []
        return _template(members), {}

    # Paused batches (see group_batches) -----------------------------------
    def handle_create(self):
        self.data_set("removed", self._removed())
        steps = self._steps(Action.CREATE, "batch_create", {})
        if steps is None:
            return super().handle_create()
        self.resource_id_set(
            self.nested_stacks.create(
                self.stack["id"],
                self._parent_template_id(),
                self.name,
                self._step_template(steps),
                {},
            )
        )
        return steps

    def handle_update(self, new_props, prop_diff):
        old = self._definitions()
        self.properties = new_props
        self.data_set("removed", self._removed())
        steps = None
        if "resource_def" in prop_diff:
            steps = self._steps(Action.UPDATE, "rolling_update", old)
        if steps is None:
            template, params = self.child_template("rolling_update")
            self.nested_stacks.update(
                self.resource_id,
                self._parent_template_id(),
                self.name,
                template,
                params,
            )
            return Action.UPDATE
        self._update_child(self._step_template(steps))
        return steps

    def _steps(self, action, policy_key, old):
        """The stepped plan of ``action``, or None when nothing pauses."""
        rules = group_batches.policy(self.update_policy, policy_key)
        if not rules or not rules["pause_time"]:
            return None
        final = self._definitions()
        changed = [n for n in final if old.get(n) != final[n]]
        batches = group_batches.chunks(
            changed, group_batches.batch_size(len(final), rules)
        )
        if len(batches) < 2:
            return None
        return {
            "action": action,
            "final": final,
            "old": old,
            "batches": batches,
            "index": 0,
            "pause_until": None,
            "pause": rules["pause_time"],
        }

    @staticmethod
    def _step_template(steps):
        return _template(
            group_batches.step_resources(
                steps["final"], steps["old"], steps["batches"], steps["index"]
            )
        )

    def _update_child(self, template):
        self.nested_stacks.update(
            self.resource_id,
            self._parent_template_id(),
            self.name,
            template,
            {},
        )

    def _stack_done(self, action):
        if not isinstance(action, dict):
            return super()._stack_done(action)
        steps = action
        if steps["pause_until"] is not None:
            left = steps["pause_until"] - time.time()
            if left > 0:
                raise base.PollDelay(left)
            steps["pause_until"] = None
            steps["index"] += 1
            self._update_child(self._step_template(steps))
        child_action = (
            steps["action"] if steps["index"] == 0 else Action.UPDATE
        )
        super()._stack_done(child_action)
        if steps["index"] + 1 < len(steps["batches"]):
            steps["pause_until"] = time.time() + steps["pause"]
            raise base.PollDelay(steps["pause"])
        return True


def _template(resources):
    return {"heat_template_version": "2015-04-30", "resources": resources}


class ResourceChain(_Members):
    """Members of the listed types, each depending on the previous one
    unless ``concurrent``."""

    properties_schema = {
        "resources": p.Schema(
            p.LIST,
            "The member types, in order.",
            required=True,
            update_allowed=True,
            schema=p.Schema(p.STRING),
        ),
        "concurrent": p.Schema(
            p.BOOLEAN,
            "Create all members at once.",
            default=False,
            update_allowed=True,
        ),
        "resource_properties": p.Schema(
            p.MAP,
            "Properties of every member.",
            default={},
            update_allowed=True,
        ),
    }

    def member_names(self):
        return [str(i) for i in range(len(self.properties["resources"]))]

    def child_template(self):
        resources = {}
        props = self.properties.get("resource_properties") or {}
        for i, rtype in enumerate(self.properties["resources"]):
            member = {"type": rtype}
            if props:
                member["properties"] = json.loads(json.dumps(props))
            if i and not self.properties.get("concurrent"):
                member["depends_on"] = str(i - 1)
            resources[str(i)] = member
        return {
            "heat_template_version": "2015-04-30",
            "resources": resources,
        }, {}
