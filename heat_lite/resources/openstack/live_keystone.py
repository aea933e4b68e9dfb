"""The live state of the Keystone types for drift detection
(``Resource.live_state``; ``engine.drift`` compares it).

One GET of the project, role, group or user (a 404 is
``ResourceGone``): its fields under their template names (``enabled``
from ``is_enabled``), ``domain``, ``parent`` and ``default_project`` as
the record stores them while they name the same thing (names and IDs
resolved through ``client.find_id``, cached 30 s), else Keystone's ID,
and a project's ``tags`` as a set. ``roles`` costs one list of the
actor's direct role assignments: the template's entries come back as
they are when each is granted; a missing one drops out, and a grant
made out of band to a user or group the stack made is added as
``{role, project | domain}`` (IDs). A ``UserRoleAssignment`` names a
user made elsewhere, so only its own entries count: a missing one is
drift, another grant of that user is not. A user's ``groups`` costs one
list of its groups. A ``password`` is never read back.
"""

from heat_lite.resources import base
from heat_lite.resources.openstack import client

sdk_exc = client.sdk_exc

# kind -> the plain properties compared (template name: sdk attribute).
FIELDS = {
    "project": {"name": "name", "description": "description"},
    "role": {"name": "name"},
    "group": {"name": "name", "description": "description"},
    "user": {"name": "name", "description": "description", "email": "email"},
}
ENABLED = ("project", "user")
# kind -> {property: (kind found by name or ID, sdk attribute)}.
REFERENCES = {
    "project": {
        "domain": ("domain", "domain_id"),
        "parent": ("project", "parent_id"),
    },
    "group": {"domain": ("domain", "domain_id")},
    "user": {
        "domain": ("domain", "domain_id"),
        "default_project": ("project", "default_project_id"),
    },
}


def _find(plugin, kind, value):
    return client.find_live_id(plugin, "identity", kind, value)


def _ref(plugin, kind, stored, live_id):
    """``stored`` while it names ``live_id``, else the live ID."""
    if client.same_ref(plugin, "identity", kind, stored, live_id):
        return stored
    return live_id


def identity_state(plugin):
    """{property: live value} of a Project, Role, Group or User.

    :raises base.ResourceGone: Keystone answers 404.
    """
    kind = plugin.kind
    ident = client.connection(plugin).identity
    try:
        live = getattr(ident, "get_" + kind)(plugin.resource_id)
    except sdk_exc.NotFoundException:
        raise base.ResourceGone() from None
    props = plugin.properties
    state = {name: getattr(live, attr) for name, attr in FIELDS[kind].items()}
    if kind in ENABLED:
        state["enabled"] = live.is_enabled
    for prop, (found, attr) in REFERENCES.get(kind, {}).items():
        if props.get(prop) is not None:
            state[prop] = _ref(plugin, found, props[prop], getattr(live, attr))
    if kind == "project":
        stored = props.get("tags") or []
        have = list(live.tags or ())
        state["tags"] = stored if sorted(stored) == sorted(have) else have
    if kind == "user" and props.get("groups") is not None:
        state["groups"] = _groups(plugin, ident)
    if kind in ("user", "group") and props.get("roles") is not None:
        state["roles"] = roles_state(plugin, kind, plugin.resource_id, True)
    return state


def assignment_state(plugin):
    """{user, roles} of a UserRoleAssignment (its physical ID is the
    user's ID).

    :raises base.ResourceGone: the user is gone.
    """
    ident = client.connection(plugin).identity
    try:
        ident.get_user(plugin.resource_id)
    except sdk_exc.NotFoundException:
        raise base.ResourceGone() from None
    props = plugin.properties
    state = {"user": _ref(plugin, "user", props["user"], plugin.resource_id)}
    if props.get("roles") is not None:
        state["roles"] = roles_state(plugin, "user", plugin.resource_id, False)
    return state


def _key(plugin, entry):
    """(role ID, "project" | "domain", target ID) of a ``roles`` entry."""
    where = "project" if entry.get("project") else "domain"
    return (
        _find(plugin, "role", entry["role"]) or entry["role"],
        where,
        _find(plugin, where, entry[where]) or entry[where],
    )


def roles_state(plugin, actor, actor_id, owned):
    """The ``roles`` entries granted to the actor: the stored ones still
    granted, then (``owned``) the other direct grants."""
    stored = plugin.properties.get("roles") or []
    ident = client.connection(plugin).identity
    granted = set()
    for grant in ident.role_assignments(**{actor + "_id": actor_id}):
        scope = grant.scope or {}
        for where in ("project", "domain"):
            if where in scope:
                granted.add((grant.role["id"], where, scope[where]["id"]))
    keys = [_key(plugin, e) for e in stored]
    kept = [e for e, k in zip(stored, keys, strict=True) if k in granted]
    if len(kept) == len(stored) and (not owned or granted <= set(keys)):
        return stored
    extra = sorted(granted - set(keys)) if owned else []
    return kept + [{"role": r, where: t} for r, where, t in extra]


def _groups(plugin, ident):
    stored = plugin.properties["groups"] or []
    have = sorted(g.id for g in ident.user_groups(plugin.resource_id))
    wanted = sorted(_find(plugin, "group", g) or g for g in stored)
    return stored if wanted == have else have
