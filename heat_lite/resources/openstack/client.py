"""openstacksdk connections for the OpenStack resource types.

A plugin asks ``connection(plugin)`` for the cloud it acts in. Which
identity that is decides the cache key, and connections are cached per
identity for the life of the process, never made per request: a
keystoneauth1 session re-authenticates by itself when its token nears
expiry, and every poll of every resource reuses it.

Identities:

* noauth mode: the operator's cloud from ``[openstack]`` (a clouds.yaml
  entry, or keystoneauth1 options), key ``("configured",)``;
* keystone mode: the user who made the stack. That is done through a
  Keystone trust from the user to heat_lite's service user, made when the
  stack operation is accepted (Heat's ``deferred_auth_method = trusts``,
  see ``heat_lite.engine.trusts``). A plugin finds its stack's trust and
  logs in with it through its services object (``services.trust_id``,
  ``services.trusted_session``, see ``heat_lite.resources.services``);
  key ``("trust", <trust id>)``. A stack without a trust refuses to act
  rather than act in another identity on a user's behalf.

Endpoints come from the identity's service catalog (``region_name``,
``interface``).

The engine imports nothing of this package: what it asks of the cloud
side (who custom constraints act as during a call, forgetting the
connection of a deleted trust) is ``Cloud``, the ``openstack`` entry point
of ``heat_lite.clouds`` (``resources.services.CloudSide``).
"""

import collections
import contextlib
import contextvars
import importlib
import logging
import sys
import threading
import time
import types

from keystoneauth1 import loading
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
from requests import adapters as requests_adapters
from urllib3 import connectionpool as urllib3_pools

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.conf import openstack as openstack_conf

CONF = conf.CONF
LOG = logging.getLogger(__name__)
_LOCK = threading.Lock()
# Most recently used last; beyond the newest MAX_CONNECTIONS the least
# recently used is dropped (its stack is idle: its next action logs in
# again). Trusts of stacks deleted by another engine age out this way.
_CONNECTIONS = collections.OrderedDict()
MAX_CONNECTIONS = 256
# Who a custom constraint asks the cloud as (see acting_as).
_ACTING = contextvars.ContextVar("heat_lite_acting", default=None)


class _Deferred:
    """A module imported when one of its names is first used."""

    def __init__(self, name):
        self._module_name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._module_name), attr)


#: openstacksdk's exceptions, for the plugins' ``except`` clauses. Loading
#: a resource type (every engine loads them all at start) must not import
#: openstacksdk: see ``_sdk``.
sdk_exc = _Deferred("openstack.exceptions")


class CloudUnavailable(exception.HeatLiteException):
    """No identity to act in the cloud with (a configuration problem)."""

    msg_fmt = "%(message)s"


class ResourceInError(exception.HeatLiteException):
    """A cloud resource went to an error status (Heat's words)."""

    msg_fmt = 'Went to status %(resource_status)s due to "%(status_reason)s"'


class ResourceUnknownStatus(exception.HeatLiteException):
    """A cloud resource is in a status it will not leave by itself."""

    msg_fmt = (
        "%(result)s - Unknown status %(resource_status)s due to "
        '"%(status_reason)s"'
    )


class Error(exception.HeatLiteException):
    """An action on a cloud resource cannot go on (Heat's ``Error``)."""

    msg_fmt = "%(message)s"


class NotFound(exception.HeatLiteException):
    """The cloud resource an action needs is gone."""

    msg_fmt = "%(message)s"


def _trust_of(plugin):
    """The trust ``plugin``'s stack acts through (None: none, or no
    services to ask)."""
    services = getattr(plugin, "services", None)
    if plugin is None or services is None:
        return None
    return services.trust_id(plugin.stack or {})


def identity(plugin=None):
    """The cache key of the identity ``plugin`` acts as (see above).

    :raises CloudUnavailable: in keystone mode, for no plugin or a stack
        that has no trust.
    """
    if CONF.api.auth_strategy != "keystone":
        return ("configured",)
    trust = _trust_of(plugin)
    if trust is None:
        raise CloudUnavailable(
            message="OpenStack resource types act as the user who created "
            "the stack, through a Keystone trust, in keystone mode; this "
            "stack has none (is [trustee] configured?)"
        )
    return ("trust", trust)


def trust_session(plugin):
    """The keystoneauth1 session of the trust ``plugin``'s stack acts
    through (the one its cached connection uses), or None outside keystone
    mode or for a stack that has no trust. For clients other than
    openstacksdk's (OS::Heat::Stack's orchestration API)."""
    if CONF.api.auth_strategy != "keystone" or _trust_of(plugin) is None:
        return None
    return connection(plugin).session


def connection(plugin=None):
    """The cached openstacksdk Connection for ``plugin``'s identity."""
    key = identity(plugin)
    with _LOCK:
        conn = _CONNECTIONS.get(key)
        if conn is None:
            conn = _CONNECTIONS[key] = _make(key, plugin)
        _CONNECTIONS.move_to_end(key)
        while len(_CONNECTIONS) > MAX_CONNECTIONS:
            # Dropped, not closed: another thread may be mid-request on it.
            _CONNECTIONS.popitem(last=False)
        return conn


#: Seconds a name or ID found by ``find_id`` is remembered for.
FOUND_TTL = 30.0
_FINDING = threading.Lock()
_FIND_LOCKS = {}  # {(connection, what): lock held by the one finding it}


def find_id(conn, service, finder, value, ignore_missing=False):
    """The ID of the ``service`` thing (``compute``, ``image``,
    ``network``) that ``value`` (a name or an ID) names, as
    ``conn.<service>.<finder>(value)`` finds it, or None when
    ``ignore_missing`` and there is none.

    Each find costs two requests (a GET by ID, then a list by name; a
    flavor lists every flavor), and a ResourceGroup's servers all start
    at once: 20 servers naming one flavor, image and network made ~190
    such requests at create (their constraint checks too, see
    ``cloud_constraints``). So found IDs are remembered on the connection
    (per identity: what one project sees is not another's answer) for
    ``FOUND_TTL`` seconds, as long as ``cloud_constraints`` trusts its
    answers, and concurrent finds of one value wait for the first one's
    answer instead of asking too. A miss is never remembered.
    """
    found = conn.__dict__.setdefault("_heat_lite_found", {})
    key = (service, finder, value)
    hit = found.get(key)
    if hit is not None and hit[0] > time.monotonic():
        return hit[1]
    with _FINDING:
        lock = _FIND_LOCKS.setdefault((id(conn), key), threading.Lock())
    try:
        with lock:
            hit = found.get(key)
            if hit is not None and hit[0] > time.monotonic():
                return hit[1]
            thing = getattr(getattr(conn, service), finder)(
                value, ignore_missing=ignore_missing
            )
            if thing is None:
                return None
            found[key] = (time.monotonic() + FOUND_TTL, thing.id)
            return thing.id
    finally:
        with _FINDING:
            if _FIND_LOCKS.get((id(conn), key)) is lock and not lock.locked():
                del _FIND_LOCKS[(id(conn), key)]


def find_live_id(plugin, service, kind, value):
    """The ID of the ``service``'s ``kind`` that ``value`` (a name or an
    ID, as a template stored it) names now, or None: drift's lookup."""
    return find_id(
        connection(plugin), service, "find_" + kind, value, ignore_missing=True
    )


def same_ref(plugin, service, kind, stored, live_id):
    """Whether ``stored`` (a name or an ID, as the template gave it)
    still names the live thing ``live_id``: a name is not drift as long
    as it finds the same thing."""
    return stored == live_id or (
        find_live_id(plugin, service, kind, stored) == live_id
    )


def forget(trust):
    """Drop the connection of a deleted trust."""
    with _LOCK:
        conn = _CONNECTIONS.pop(("trust", trust), None)
    if conn is not None:
        conn.close()


#: Seconds a pooled connection to the cloud may sit idle and still be
#: used (see ``_fresh``).
MAX_IDLE = 1.0


def _fresh(session):
    """Make ``session`` (keystoneauth1's) never send a request on a
    connection idle for more than ``MAX_IDLE`` seconds, and return it.

    A server closes a keep-alive connection idle past its own timeout
    (gunicorn's 2 s, Apache's 5 s). A connection it closed a while ago is
    noticed before use and replaced, but one it closes while a request
    is being sent on it fails that request unanswered ("RemoteDisconnected"),
    and a write is never sent twice (``transient``): a resize failed so.
    Polls answered by one list (``server_board``) leave connections idle
    longer, which made this likelier. A connection idle past
    ``MAX_IDLE`` is closed and opened anew instead: it costs a TCP
    handshake, never a failed write."""
    inner = session.session
    for prefix in ("http://", "https://"):
        if not isinstance(inner.get_adapter(prefix), _FreshAdapter):
            inner.mount(prefix, _FreshAdapter())
    return session


def _fresh_pool(base):
    """``base`` (a urllib3 pool class) that closes, instead of using, a
    connection idle for more than ``MAX_IDLE`` seconds."""

    class Pool(base):
        def _get_conn(self, timeout=None):
            conn = super()._get_conn(timeout)
            idle_since = getattr(conn, "_heat_lite_idle_since", None)
            if idle_since is not None and (
                time.monotonic() - idle_since > MAX_IDLE
            ):
                conn.close()  # connected again by the request
            return conn

        def _put_conn(self, conn):
            if conn is not None:
                conn._heat_lite_idle_since = time.monotonic()
            super()._put_conn(conn)

    Pool.__name__ = "Fresh" + base.__name__
    return Pool


_FRESH_POOLS = {
    "http": _fresh_pool(urllib3_pools.HTTPConnectionPool),
    "https": _fresh_pool(urllib3_pools.HTTPSConnectionPool),
}


class _FreshAdapter(requests_adapters.HTTPAdapter):
    """requests' adapter whose pools are ``_fresh_pool``'s."""

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _FRESH_POOLS


def _make(key, plugin):
    if key[0] == "configured":
        conn = _configured()
        _fresh(conn.session)
    else:
        group = CONF[openstack_conf.GROUP]
        conn = _sdk().connection.Connection(
            session=_fresh(plugin.services.trusted_session(key[1])),
            region_name=group.region_name,
            interface=group.interface,
            connect_retries=group.connect_retries,
        )
    return conn


def reset():
    """Forget every cached connection (after a config reload; tests)."""
    with _LOCK:
        for conn in _CONNECTIONS.values():
            conn.close()
        _CONNECTIONS.clear()


def _sdk():
    """openstacksdk, imported when a connection is first made.

    It costs about 0.3 s of CPU to import, and most processes (every
    ``heat-lite-all`` of the quick start) never talk to a cloud.
    """
    import openstack
    import openstack.config

    return openstack


#: The openstacksdk modules a server's create, polls and lookups load.
_HOT_MODULES = (
    "openstack.compute.v2._proxy",
    "openstack.image.v2._proxy",
    "openstack.network.v2._proxy",
)


def _import_sdk():
    try:
        _sdk()
        for name in _HOT_MODULES:
            importlib.import_module(name)
    except Exception:  # noqa: BLE001 - the first action imports it then
        LOG.warning("Importing openstacksdk ahead failed", exc_info=True)


def _configured():
    openstack = _sdk()
    group = CONF[openstack_conf.GROUP]
    if group.cloud:
        files = [group.clouds_yaml] if group.clouds_yaml else None
        loader = openstack.config.OpenStackConfig(
            config_files=files, load_envvars=False
        )
        try:
            region = loader.get_one(
                cloud=group.cloud,
                region_name=group.region_name,
                interface=group.interface,
                connect_retries=group.connect_retries,
            )
        except openstack.exceptions.ConfigException as exc:
            raise CloudUnavailable(
                message="[openstack] cloud %s: %s" % (group.cloud, exc)
            ) from None
        return openstack.connection.Connection(config=region)
    auth = loading.load_auth_from_conf_options(CONF, openstack_conf.GROUP)
    if auth is None:
        raise CloudUnavailable(
            message="No cloud is configured for the OpenStack resource "
            "types: set [openstack] cloud (a clouds.yaml entry) or "
            "[openstack] auth_type with its options"
        )
    session = loading.load_session_from_conf_options(
        CONF, openstack_conf.GROUP, auth=auth
    )
    return openstack.connection.Connection(
        session=session,
        region_name=group.region_name,
        interface=group.interface,
        connect_retries=group.connect_retries,
    )


class _Acting:
    """The identity checks made now act as, found lazily: the cache key
    of its answers (its project) and, on a miss, a connection."""

    def __init__(self, plugin=None, request=None):
        self.plugin = plugin
        self.request = request
        self.own = None  # a connection made for a caller's token

    def project(self):
        """The cache scope of answers: the project (None: no identity,
        checks accept every value)."""
        if CONF.api.auth_strategy != "keystone":
            return ("configured",)
        if self.plugin is not None and trust_session(self.plugin):
            return ("project", (self.plugin.stack or {}).get("tenant"))
        if getattr(self.request, "auth_token", None):
            return ("project", self.request.project_id)
        return None

    def connection(self):
        if CONF.api.auth_strategy != "keystone":
            return connection()
        if self.plugin is not None and trust_session(self.plugin):
            return connection(self.plugin)
        if self.own is None:
            self.own = _caller_connection(self.request)
        return self.own

    def close(self):
        if self.own is not None:
            self.own.close()


def _caller_connection(request):
    """A connection with the caller's token, re-scoped at Keystone to get
    its catalog (the ``[trustee] auth_url``)."""
    trustee = loading.load_auth_from_conf_options(CONF, "trustee")
    if getattr(trustee, "auth_url", None) is None:
        raise CloudUnavailable(
            message="No Keystone to re-scope the caller's token at: "
            "[trustee] auth_url is unset"
        )
    auth = v3.Token(
        auth_url=trustee.auth_url,
        token=request.auth_token,
        project_id=request.project_id,
    )
    group = CONF[openstack_conf.GROUP]
    return _sdk().connection.Connection(
        session=_fresh(ks_session.Session(auth=auth)),
        region_name=group.region_name,
        interface=group.interface,
        connect_retries=group.connect_retries,
    )


@contextlib.contextmanager
def acting_as(plugin=None, request=None, stack=None, services=None):
    """Within the block, custom constraints ask the cloud as ``plugin``'s
    (or ``stack``'s: a stack dict with its stored trust, found through
    ``services``) trust, else with the token of the request context
    ``request`` (keystone mode), else as the configured cloud (noauth)."""
    if plugin is None and stack is not None:
        plugin = types.SimpleNamespace(stack=stack, services=services)
    acting = _Acting(plugin, request)
    reset = _ACTING.set(acting)
    try:
        yield acting
    finally:
        _ACTING.reset(reset)
        acting.close()


def acting():
    """The identity of the enclosing ``acting_as`` block, or one with no
    plugin and no request (the configured cloud in noauth mode)."""
    return _ACTING.get() or _Acting()


class Cloud:
    """What the engine asks of the OpenStack plugins
    (``resources.services.CloudSide``), loaded by the engine from the
    ``heat_lite.clouds`` entry point ``openstack``."""

    @staticmethod
    def acting_as(services, request=None, stack=None):
        """``acting_as`` for a call (``request``) or a stack's resource
        (``stack``, whose trust ``services`` finds)."""
        return acting_as(request=request, stack=stack, services=services)

    @staticmethod
    def forget(trust_id):
        forget(trust_id)

    @staticmethod
    def warm_up():
        """Import openstacksdk on a thread of its own now if this process
        will act in a cloud (keystone mode: its stacks' trusts; noauth: a
        configured cloud), instead of in its first cloud action.

        The import costs 0.3-0.6 s of CPU per process. Paid by the first
        action, it delayed that action (and every resource starting with
        it) and made the first stack's resources each pay a share: on a
        20-server create right after the engine started, 20-40 ms of
        engine CPU per server. A process that never acts in a cloud (the
        quick start's ``heat-lite-all``) still never imports it."""
        group = CONF[openstack_conf.GROUP]
        if CONF.api.auth_strategy != "keystone" and not (
            group.cloud or group.auth_type
        ):
            return
        threading.Thread(
            target=_import_sdk, daemon=True, name="heat-lite-sdk-import"
        ).start()

    @staticmethod
    def is_cloud_error(exc):
        """openstacksdk's and keystoneauth's own errors: the cloud said
        no. Looked up among loaded modules (an error of theirs means they
        are), so that asking never imports openstacksdk."""
        for module, name in (
            ("openstack.exceptions", "SDKException"),
            ("keystoneauth1.exceptions", "ClientException"),
        ):
            loaded = sys.modules.get(module)
            if loaded is not None and isinstance(exc, getattr(loaded, name)):
                return True
        return False
