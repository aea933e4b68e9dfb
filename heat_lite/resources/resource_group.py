"""OS::Heat::ResourceGroup and OS::Heat::ResourceChain: a nested stack of
members named "0", "1", ... built from one definition (group) or a list
of types (chain)."""

import copy
import json

from heat_lite.common import exception
from heat_lite.resources import base, constraints, stack_resource
from heat_lite.resources import properties as p

_ATTRIBUTES = {
    "refs": p.Attribute("The reference ids of the members, in order.",
                        "LIST"),
    "refs_map": p.Attribute("A map of member name to reference id.",
                            "MAP"),
    "attributes": p.Attribute("A map of member name to the attribute "
                              "named by the path.", "MAP"),
    "removed_rsrc_list": p.Attribute("Members removed by removal "
                                     "policies.", "LIST"),
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
            value, path = ((member[1].get(parts[1]), parts[2:])
                           if len(parts) > 1 else (member[0], ()))
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
        return {k: _replace_index(v, index_var, index)
                for k, v in value.items()}
    return value


def _batches(names, size):
    return [names[i:i + size] for i in range(0, len(names), size)]


class ResourceGroup(_Members):
    """``count`` copies of ``resource_def``; see heat.md §5.6."""

    properties_schema = {
        "count": p.Schema(p.INTEGER, "Number of members.", default=1,
                          update_allowed=True,
                          constraints=[constraints.Range(min=0)]),
        "index_var": p.Schema(p.STRING, "Replaced by the member name in "
                              "the member properties.", default="%index%",
                              update_allowed=True,
                              constraints=[constraints.Length(min=3)]),
        "resource_def": p.Schema(p.MAP, "The member definition.",
                                 required=True, update_allowed=True,
                                 schema={
                                     "type": p.Schema(p.STRING,
                                                      required=True),
                                     "properties": p.Schema(p.MAP),
                                     "metadata": p.Schema(p.MAP)}),
        "removal_policies": p.Schema(
            p.LIST, "Members to remove; their names are never reused.",
            default=[], update_allowed=True,
            schema={"resource_list": p.Schema(p.LIST, default=[])}),
        "removal_policies_mode": p.Schema(
            p.STRING, "append or update the stored removal list.",
            default="append", update_allowed=True,
            constraints=[constraints.AllowedValues(["append", "update"])]),
    }

    def _removed(self):
        """Names removed for good (stored, extended per the mode)."""
        stored = [] if self.properties.get("removal_policies_mode") == \
            "update" else list(self.data().get("removed", []))
        for policy in self.properties.get("removal_policies") or []:
            for name in policy.get("resource_list") or []:
                if str(name) not in stored:
                    stored.append(str(name))
        return stored

    def member_names(self):
        removed = set(self.data().get("removed", []))
        count = self.properties.get("count") or 0
        names, i = [], 0
        while len(names) < count:
            if str(i) not in removed:
                names.append(str(i))
            i += 1
        return names

    def child_template(self):
        self.data_set("removed", self._removed())
        definition = self.properties["resource_def"]
        index_var = self.properties.get("index_var") or "%index%"
        names = self.member_names()
        batch = self._batch_size()
        resources = {}
        previous = []
        for group in _batches(names, batch) if batch else [names]:
            for name in group:
                member = {"type": definition["type"]}
                for key in ("properties", "metadata"):
                    if definition.get(key):
                        member[key] = _replace_index(
                            copy.deepcopy(definition[key]), index_var, name)
                if previous:
                    member["depends_on"] = list(previous)
                resources[name] = member
            previous = group if batch else []
        return {"heat_template_version": "2015-04-30",
                "resources": resources}, {}

    def _batch_size(self):
        policy = self.update_policy or {}
        for key in ("batch_create", "rolling_update"):
            size = (policy.get(key) or {}).get("max_batch_size")
            if size:
                try:
                    return max(int(size), 1)
                except (TypeError, ValueError):
                    raise exception.StackValidationFailed(
                        path="update_policy.%s.max_batch_size" % key,
                        msg="must be an integer") from None
        return 0


class ResourceChain(_Members):
    """Members of the listed types, each depending on the previous one
    unless ``concurrent``."""

    properties_schema = {
        "resources": p.Schema(p.LIST, "The member types, in order.",
                              required=True, update_allowed=True,
                              schema=p.Schema(p.STRING)),
        "concurrent": p.Schema(p.BOOLEAN, "Create all members at once.",
                               default=False, update_allowed=True),
        "resource_properties": p.Schema(p.MAP, "Properties of every "
                                        "member.", default={},
                                        update_allowed=True),
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
        return {"heat_template_version": "2015-04-30",
                "resources": resources}, {}
