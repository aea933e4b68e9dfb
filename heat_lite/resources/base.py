"""The resource plugin contract.

A plugin subclasses ``Resource``, declares ``properties_schema`` and
``attributes_schema``, and implements any of ``handle_<action>`` (create,
update, delete, suspend, resume, check) and ``handle_signal``. A handler
returns a cookie; if the plugin also defines ``check_<action>_complete``,
the engine polls it (without blocking a worker thread) until it returns
True. A plugin asks to be replaced instead of updated in place by
returning True from ``needs_replace`` or raising ``UpdateReplace`` from
``handle_update``; changing a property that is not ``update_allowed``
replaces it too. Plugins are loaded from the ``heat_lite.resources`` entry
points (see ``resources.registry``).

``handle_signal(details)`` runs when the API delivers a signal to a
resource at rest; it records what it needs with ``data_set`` (and may
change ``self.metadata``, the resource's metadata map, which the signal
path sets); both are stored after it returns. It may return the text of
the SIGNAL event's reason, and raises to refuse the signal.

``handle_adopt(resource_data)`` runs instead of ``handle_create`` when a
stack is adopted from abandon data: the engine has already set
``resource_id`` and ``data()`` from the data's entry (``resource_data``
is that entry: ``resource_id``, ``resource_data`` and, for a nested
stack, ``resources``). The default only insists on a physical ID; a
plugin may override it to check that the resource really exists.

``find_created()`` answers "did the interrupted create make anything?"
when the engine that ran a create went down (or was fenced) and another
engine took the record over: the outcome is unknown. It runs under the
record's lock with ``resource_id`` as far as it was stored (None if the
create died before) and the same ``physical_resource_name()`` as the
first attempt. It looks the resource up -- by physical ID, else by the
name or tag it was created with -- and either returns None (nothing
exists: the engine calls ``handle_create``) or sets ``resource_id`` to
what it found and returns a cookie for ``check_create_complete`` (the
engine waits for it as if ``handle_create`` had returned it). A plugin
that does not override it keeps the old behaviour: the record counts as
a failed create and is replaced by a new one.

``live_state()`` serves drift detection (``engine.drift``): it reads the
physical resource and returns ``{property: live value}`` for the
properties the type can read, in the form its properties store them (a
flavor the template named by name is returned by that name when the
server has that flavor), and may add values that are not properties (a
server's ``status``) whose expected values ``live_expectations(action)``
gives. It raises ``ResourceGone`` when the physical resource no longer
exists (DELETED). The default raises ``NotImplementedError``: the type
cannot read its live state (NOT_CHECKED; a message given to the
exception is the report's reason). The engine compares only the
properties the template set, so values the cloud fills in are no drift.
"""

from heat_lite.common import exception
from heat_lite.common.states import Action
from heat_lite.resources import properties
from heat_lite.resources import services as plugin_services

UpdateReplace = exception.UpdateReplace


class ActionFailed(Exception):
    """A resource's action failed for a reason the resource states (a
    timeout, a failure it was told of): an outcome, not a bug, so the
    engine logs it as one line, without a traceback."""


class AdoptFailed(ActionFailed):
    """The adopt data does not name a resource to take over."""


def dig(value, path):
    """Index ``value`` by each key of ``path``; None if one is missing
    (how get_attr paths behave in Heat)."""
    for key in path or ():
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


class ResourceGone(Exception):
    """Raised by ``live_state``: the physical resource no longer
    exists."""


def state_in_record(plugin):
    """``live_state`` of a type whose whole state is its own record
    (``live_state = base.state_in_record``): nothing outside heat_lite
    can change it, so it is always IN_SYNC."""
    return {}


class PollDelay(Exception):
    """Raised by check_*_complete: "not yet, look again in N seconds"."""

    def __init__(self, seconds):
        super().__init__(seconds)
        self.seconds = seconds


class Resource:
    """Base class of resource plugins.

    :ivar name: the logical name in the template.
    :ivar properties: the resolved, validated properties.
    :ivar resource_id: the physical ID (None until created).
    """

    properties_schema = {}
    attributes_schema = {}
    # {deprecated property name: the name that replaced it}: a template
    # may still use the old name (Heat's hidden properties with a REPLACE
    # translation rule); the plugin only ever sees the new one.
    deprecated_properties = {}
    # Seconds between two polls of check_*_complete when not told.
    default_poll_interval = 0.2
    # Store the physical ID the moment the plugin sets it, so that an
    # engine dying right after a create cannot leak the real resource.
    # A type with nothing real behind it may skip that write.
    persist_resource_id_at_once = True
    # A plugin that acts in another service as the user who started the
    # operation says so here; each of its actions then gets
    # ``services.request_context``: a RequestContext carrying that user's
    # token (keystone mode, see heat_lite.engine.worker.caller), or None.
    needs_caller_token = False
    # ``implicit_depends(defn, others, param) -> {resource name}``: the
    # resources of the same stack this one waits for although its
    # definition does not refer to them (Heat's ``add_dependencies``).
    # ``defn`` is its parsed, unresolved definition, ``others`` {name:
    # (plugin class or None, definition)} of the stack's other resources,
    # ``param(name)`` a parameter's value. None: no such dependencies.
    implicit_depends = None
    # ``check_request(values, files, path)`` (a classmethod): a check of a
    # create or update request that asks another service, run before the
    # request is accepted (its typed errors are the request's 400s).
    # ``values`` are the properties that depend on no resource, resolved;
    # ``files`` the request's files map. None: no such check.
    check_request = None
    # A type Heat keeps under an old name for old templates (its HIDDEN
    # support status): it works but the resource type list leaves it out.
    hidden_type = False

    def __init__(
        self,
        name,
        type_name,
        props,
        resource_id=None,
        data=None,
        stack=None,
        services=None,
    ):
        self.name = name
        self.type_name = type_name
        self.properties = props
        self.resource_id = resource_id
        self._data = dict(data or {})
        self.stack = stack or {}
        self.data_changed = False
        self.resource_id_changed = False
        # What the plugin may ask of the engine (resources.services); the
        # engine binds it to each action it runs (``for_action``).
        self.services: plugin_services.Services = (
            services or plugin_services.UNAVAILABLE
        )
        # The template's update_policy section, set by the engine.
        self.update_policy = {}

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        """Return validated properties; see ``properties.validate``
        (deprecated names first become their new ones:
        ``properties.translate``)."""
        values, unresolved = properties.translate(
            cls.deprecated_properties, values, path, unresolved
        )
        return properties.validate(
            cls.properties_schema, values, path, unresolved
        )

    # Identity and storage ------------------------------------------------
    def resource_id_set(self, resource_id):
        """Record the physical ID (stored at once, see above)."""
        self.resource_id = resource_id
        self.resource_id_changed = True
        write = self.services.write_physical_id
        if write is not None and self.persist_resource_id_at_once:
            write(resource_id)
            self.resource_id_changed = False

    def data(self):
        return dict(self._data)

    def data_set(self, key, value):
        self._data[key] = value
        self.data_changed = True

    def data_delete(self, key):
        self._data.pop(key, None)
        self.data_changed = True

    def lookup_data(self, name):
        """The stored data (``data()``) of the resource ``name`` of this
        stack, as its current record holds it, or None if there is none.

        For types that watch another resource (a wait condition polls its
        handle's signals). Read only, by design: a plugin changes nothing
        but its own record. The engine provides it (``services``) while a
        handler or a ``check_*_complete`` runs; elsewhere (e.g. when the
        API resolves an attribute) it is unavailable.

        :raises RuntimeError: if the engine did not provide it
            (``services.ServiceUnavailable``).
        """
        return self.services.resource_data(name)

    @property
    def request_context(self):
        """The caller's request context during an action of a plugin that
        ``needs_caller_token`` (None otherwise)."""
        return self.services.request_context

    def physical_resource_name(self):
        """``<stack>-<name>-<short id>``, as Heat names things."""
        short = (self.stack.get("record_uuid") or "")[:12]
        return "%s-%s-%s" % (self.stack.get("name", "stack"), self.name, short)

    def get_reference_id(self):
        """What ``get_resource`` returns: the physical ID, else the name."""
        return self.resource_id or self.name

    @classmethod
    def attributes(cls):
        """{name: Attribute} including the base attribute ``show``."""
        result = properties.attribute_schema(cls.attributes_schema)
        result.setdefault(
            "show",
            properties.Attribute("Detailed information about the resource."),
        )
        return result

    def get_attribute(self, name, path=()):
        """Return the attribute ``name`` (then index into ``path``)."""
        if name == "show":
            value = self._show_resource()
        else:
            value = self._resolve_attribute(name)
        return dig(value, path)

    def _resolve_attribute(self, name):
        """Override: the value of attribute ``name`` (None if unknown)."""
        return None

    def _show_resource(self):
        """Override: what the ``show`` attribute returns."""
        return None

    def handle_adopt(self, resource_data):
        """Take over an existing physical resource (see the module
        docstring). Fails, as Heat does, without a physical ID."""
        if not self.resource_id:
            raise AdoptFailed("Resource ID was not provided.")

    def find_created(self):
        """What an interrupted create made (see the module docstring):
        None, or a cookie for ``check_create_complete``.

        :raises NotImplementedError: the plugin cannot tell (the default).
        """
        raise NotImplementedError

    # Drift (engine.drift) ---------------------------------------------------
    def live_state(self):
        """{property or observed value: live value}; see the module
        docstring.

        :raises ResourceGone: the physical resource is gone.
        :raises NotImplementedError: the type cannot read its live state.
        """
        raise NotImplementedError

    def live_expectations(self, action):
        """{name: expected value} of what ``live_state`` observes beyond
        the properties, for a record whose last action was ``action``."""
        return {}

    # Replacement decisions -----------------------------------------------
    def needs_replace_failed(self, failed_action):
        """True if a record whose ``failed_action`` failed must be replaced
        rather than updated in place.

        A failed create (or a create cut short by a dead engine) may have
        left a half-made resource, so it is replaced; after a failed update
        the physical resource still exists, so the next update (or a
        rollback) tries it in place and keeps its physical ID.
        """
        return failed_action != Action.UPDATE

    @classmethod
    def may_name_images(cls):
        """Whether any property of this type is an image reference."""
        cached = cls.__dict__.get("_names_images")
        if cached is None:
            cached = properties.has_constraint(
                cls.properties_schema, "glance.image"
            )
            cls._names_images = cached
        return cached

    def image_references(self, props=None):
        """The images this resource's properties name (ids or names: the
        values of properties constrained to ``glance.image``), for image
        retention (``db.image_holds``): while a record names an image,
        heat_lite does not retire it.

        :param props: properties other than the plugin's own (an
            update's new ones, before ``handle_update`` takes them).
        """
        if not self.may_name_images():
            return []
        return properties.constrained_values(
            self.properties_schema,
            self.properties if props is None else props,
            "glance.image",
        )

    def immutable_changes(self, prop_diff):
        """The changed properties that may never change."""
        schema = self.properties_schema or {}
        return sorted(
            k for k in prop_diff if k in schema and schema[k].immutable
        )

    def needs_replace(self, new_props, prop_diff):
        """True if going to ``new_props`` needs a new physical resource.

        The default replaces when a changed property is not
        update_allowed.
        """
        schema = self.properties_schema
        if schema is None:
            return False
        return any(
            not schema[k].update_allowed for k in prop_diff if k in schema
        )
