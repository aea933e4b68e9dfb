"""OS::Keystone::Project, Role, Group, User and UserRoleAssignment
(Heat 27's schemas), through openstacksdk's identity v3 proxy.

Domains, projects, roles, users and groups are named by name or ID. A
``roles`` property (User, Group, UserRoleAssignment) is a list of
``{role, project | domain}``: create grants them, an update revokes the
ones no longer listed and grants the new ones, delete revokes them all.
Keystone lets administrators only do most of this: as a member the
request fails with Keystone's 403. Anything already gone on delete
counts as deleted.
"""

from heat_lite.common import exception
from heat_lite.resources import base
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import client, live_keystone
from heat_lite.resources.openstack.client import sdk_exc

ROLES_SCHEMA = p.Schema(
    p.LIST,
    "List of role assignments.",
    update_allowed=True,
    schema=p.Schema(
        p.MAP,
        "Map between role with either project or domain.",
        schema={
            "role": p.Schema(p.STRING, "Keystone role.", required=True),
            "project": p.Schema(p.STRING, "Keystone project."),
            "domain": p.Schema(p.STRING, "Keystone domain."),
        },
    ),
)


def _domain_schema():
    return p.Schema(
        p.STRING,
        "Name or id of keystone domain.",
        default="default",
        update_allowed=True,
    )


class KeystoneResource(base.Resource):
    """Shared by the Keystone types: lookups, delete, attributes."""

    # The openstacksdk identity resource: create_<kind>, update_<kind>...
    kind = None
    # Template property -> openstacksdk attribute, where they differ.
    renamed = {"domain": "domain_id", "enabled": "is_enabled"}
    # Properties that are not fields of the resource.
    local_props = ("roles", "groups")

    def _ident(self):
        return client.connection(self).identity

    def _find(self, kind, name_or_id, **query):
        finder = getattr(self._ident(), "find_" + kind)
        return finder(name_or_id, ignore_missing=False, **query).id

    def _fields(self, props, names):
        fields = {}
        for name in names:
            if name in self.local_props or props.get(name) is None:
                continue
            value = props[name]
            if name == "domain":
                value = self._find("domain", value)
            fields[self.renamed.get(name, name)] = value
        return fields

    def _create_fields(self, props):
        fields = self._fields(props, props)
        fields.setdefault("name", self.physical_resource_name())
        return fields

    def handle_create(self):
        made = getattr(self._ident(), "create_" + self.kind)(
            **self._create_fields(self.properties)
        )
        self.resource_id_set(made.id)

    def handle_update(self, new_props, prop_diff):
        fields = self._fields(new_props, prop_diff)
        if fields:
            getattr(self._ident(), "update_" + self.kind)(
                self.resource_id, **fields
            )
        self.properties = new_props

    def handle_delete(self):
        if self.resource_id:
            getattr(self._ident(), "delete_" + self.kind)(
                self.resource_id, ignore_missing=True
            )

    def _live(self):
        if not self.resource_id:
            return None
        try:
            return getattr(self._ident(), "get_" + self.kind)(self.resource_id)
        except sdk_exc.NotFoundException:
            return None

    def _resolve_attribute(self, name):
        live = self._live()
        if live is None:
            return None
        return live.to_dict().get(self.renamed.get(name, name))

    def _show_resource(self):
        live = self._live()
        return live.to_dict() if live is not None else None

    def live_state(self):
        """Drift detection's view (``live_keystone``)."""
        return live_keystone.identity_state(self)


class RoleAssignments:
    """The ``roles`` property: grants to a user or a group."""

    # "user" or "group": whom the roles are granted to.
    actor = None

    @staticmethod
    def check_roles(roles, path):
        for i, entry in enumerate(roles or ()):
            if not (entry.get("project") or entry.get("domain")):
                raise exception.StackValidationFailed(
                    path="%s.roles[%d]" % (path, i),
                    msg="Either project or domain must be specified for "
                    "role %s" % entry.get("role"),
                )

    def _actor_id(self):
        return self.resource_id

    def _grant(self, entry, grant=True):
        ident = self._ident()
        role = self._find("role", entry["role"])
        if entry.get("project"):
            target, where = self._find("project", entry["project"]), "project"
        else:
            target, where = self._find("domain", entry["domain"]), "domain"
        pattern = (
            "assign_%s_role_to_%s" if grant else "unassign_%s_role_from_%s"
        )
        method = getattr(ident, pattern % (where, self.actor))
        try:
            method(target, self._actor_id(), role)
        except sdk_exc.NotFoundException:
            if grant:
                raise

    def grant_roles(self, roles):
        for entry in roles or ():
            self._grant(entry)

    def update_roles(self, old, new):
        key = lambda e: (e["role"], e.get("project"), e.get("domain"))  # noqa
        old_keys = {key(e) for e in old or ()}
        new_keys = {key(e) for e in new or ()}
        for entry in old or ():
            if key(entry) not in new_keys:
                self._grant(entry, grant=False)
        self.grant_roles([e for e in new or () if key(e) not in old_keys])

    def revoke_roles(self, roles):
        for entry in roles or ():
            try:
                self._grant(entry, grant=False)
            except sdk_exc.NotFoundException:
                pass


class Project(KeystoneResource):
    kind = "project"
    renamed = dict(KeystoneResource.renamed, parent="parent_id")
    properties_schema = {
        "name": p.Schema(
            p.STRING, "Name of keystone project.", update_allowed=True
        ),
        "domain": _domain_schema(),
        "description": p.Schema(
            p.STRING,
            "Description of keystone project.",
            default="",
            update_allowed=True,
        ),
        "enabled": p.Schema(
            p.BOOLEAN,
            "This project is enabled or disabled.",
            default=True,
            update_allowed=True,
        ),
        "parent": p.Schema(
            p.STRING,
            "The name or ID of parent of this keystone project in hierarchy.",
        ),
        "tags": p.Schema(
            p.LIST,
            "A list of tags for labeling and sorting projects.",
            default=[],
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "name": p.Attribute("Project name.", "STRING"),
        "parent_id": p.Attribute("Parent project id.", "STRING"),
        "domain_id": p.Attribute("Domain id for project.", "STRING"),
        "enabled": p.Attribute("Flag of enable project.", "BOOLEAN"),
        "is_domain": p.Attribute(
            "Indicates whether the project also acts as a domain.", "BOOLEAN"
        ),
    }

    def _create_fields(self, props):
        fields = super()._create_fields(props)
        if props.get("parent"):
            fields["parent_id"] = self._find("project", props["parent"])
        return fields

    def _resolve_attribute(self, name):
        if name == "enabled":
            name = "is_enabled"
        return super()._resolve_attribute(name)


class Role(KeystoneResource):
    kind = "role"
    properties_schema = {
        "name": p.Schema(
            p.STRING, "Name of keystone role.", update_allowed=True
        ),
        "domain": p.Schema(p.STRING, "Name or id of keystone domain."),
    }
    attributes_schema = {}


class Group(RoleAssignments, KeystoneResource):
    kind = "group"
    actor = "group"
    properties_schema = {
        "name": p.Schema(
            p.STRING, "Name of keystone group.", update_allowed=True
        ),
        "domain": _domain_schema(),
        "description": p.Schema(
            p.STRING,
            "Description of keystone group.",
            default="",
            update_allowed=True,
        ),
        "roles": ROLES_SCHEMA,
    }
    attributes_schema = {}

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        cls.check_roles(props.get("roles"), path)
        return props

    def handle_create(self):
        super().handle_create()
        self.grant_roles(self.properties.get("roles"))

    def handle_update(self, new_props, prop_diff):
        if "roles" in prop_diff:
            self.update_roles(
                self.properties.get("roles"), new_props.get("roles")
            )
        super().handle_update(new_props, prop_diff)

    def handle_delete(self):
        if self.resource_id:
            self.revoke_roles(self.properties.get("roles"))
        super().handle_delete()


class User(Group):
    kind = "user"
    actor = "user"
    renamed = dict(
        KeystoneResource.renamed, default_project="default_project_id"
    )
    properties_schema = {
        "name": p.Schema(
            p.STRING, "Name of keystone user.", update_allowed=True
        ),
        "domain": _domain_schema(),
        "description": p.Schema(
            p.STRING,
            "Description of keystone user.",
            default="",
            update_allowed=True,
        ),
        "enabled": p.Schema(
            p.BOOLEAN,
            "Keystone user is enabled or disabled.",
            default=True,
            update_allowed=True,
        ),
        "email": p.Schema(
            p.STRING, "Email address of keystone user.", update_allowed=True
        ),
        "password": p.Schema(
            p.STRING, "Password of keystone user.", update_allowed=True
        ),
        "default_project": p.Schema(
            p.STRING,
            "Name or ID of default project of keystone user.",
            update_allowed=True,
        ),
        "groups": p.Schema(
            p.LIST,
            "Keystone user groups.",
            update_allowed=True,
            schema=p.Schema(p.STRING, "Keystone user group."),
        ),
        "roles": ROLES_SCHEMA,
    }
    attributes_schema = {
        "name": p.Attribute("User name.", "STRING"),
        "default_project_id": p.Attribute(
            "Default project id for user.", "STRING"
        ),
        "domain_id": p.Attribute("Domain id for user.", "STRING"),
        "enabled": p.Attribute("Flag of enable user.", "BOOLEAN"),
        "password_expires_at": p.Attribute(
            "Show user password expiration time.", "STRING"
        ),
    }

    def _fields(self, props, names):
        fields = super()._fields(props, names)
        if fields.get("default_project_id"):
            fields["default_project_id"] = self._find(
                "project", fields["default_project_id"]
            )
        return fields

    def _set_groups(self, old, new):
        ident = self._ident()
        old_ids = {self._find("group", g) for g in old or ()}
        new_ids = {self._find("group", g) for g in new or ()}
        for group in new_ids - old_ids:
            ident.add_user_to_group(self.resource_id, group)
        for group in old_ids - new_ids:
            ident.remove_user_from_group(self.resource_id, group)

    def handle_create(self):
        super().handle_create()
        self._set_groups((), self.properties.get("groups"))

    def handle_update(self, new_props, prop_diff):
        if "groups" in prop_diff:
            self._set_groups(
                self.properties.get("groups"), new_props.get("groups")
            )
        super().handle_update(new_props, prop_diff)

    def _resolve_attribute(self, name):
        if name == "enabled":
            name = "is_enabled"
        return super()._resolve_attribute(name)


class UserRoleAssignment(RoleAssignments, base.Resource):
    """Roles of an existing user (the assignments are the resource)."""

    actor = "user"
    properties_schema = {
        "user": p.Schema(
            p.STRING,
            "Name or id of keystone user.",
            required=True,
            update_allowed=True,
        ),
        "roles": ROLES_SCHEMA,
    }
    attributes_schema = {}
    _ident = KeystoneResource._ident
    _find = KeystoneResource._find

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        cls.check_roles(props.get("roles"), path)
        return props

    def _actor_id(self):
        return self._find("user", self.properties["user"])

    def live_state(self):
        """Drift detection's view (``live_keystone``)."""
        return live_keystone.assignment_state(self)

    def handle_create(self):
        self.grant_roles(self.properties.get("roles"))
        self.resource_id_set(self._actor_id())

    def handle_update(self, new_props, prop_diff):
        if "user" in prop_diff:
            self.revoke_roles(self.properties.get("roles"))
            self.properties = new_props
            self.grant_roles(new_props.get("roles"))
        else:
            self.update_roles(
                self.properties.get("roles"), new_props.get("roles")
            )
            self.properties = new_props
        self.resource_id_set(self._actor_id())

    def handle_delete(self):
        if self.resource_id:
            try:
                self.revoke_roles(self.properties.get("roles"))
            except sdk_exc.NotFoundException:
                pass
