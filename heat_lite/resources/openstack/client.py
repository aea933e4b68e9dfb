"""openstacksdk connections for the OpenStack resource types.

A plugin asks ``connection(plugin)`` for the cloud it acts in. Which
identity that is decides the cache key, and connections are cached per
identity for the life of the process, never made per request: a
keystoneauth1 session re-authenticates by itself when its token nears
expiry, and every poll of every resource reuses it.

Identities:

* noauth mode: the operator's cloud from ``[openstack]`` (a clouds.yaml
  entry, or keystoneauth1 options), key ``("configured",)``;
* keystone mode: the user who made the request. That is done through a
  Keystone trust from the user to heat_lite's service user, made when the
  stack operation is accepted (Heat's ``deferred_auth_method = trusts``);
  its key will be ``("trust", <trust id>)``. Not built yet: until it is,
  the cloud types refuse to act in keystone mode rather than act in the
  operator's project on a user's behalf.

Endpoints come from the identity's service catalog (``region_name``,
``interface``).
"""

import threading

import openstack
from keystoneauth1 import loading
from openstack import config as os_config

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.conf import openstack as openstack_conf

CONF = conf.CONF
_LOCK = threading.Lock()
_CONNECTIONS = {}


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


def identity(plugin=None):
    """The cache key of the identity ``plugin`` acts as (see above).

    :raises CloudUnavailable: in keystone mode, until trusts exist.
    """
    if CONF.api.auth_strategy == "keystone":
        raise CloudUnavailable(
            message="OpenStack resource types act as the requesting user "
            "through a Keystone trust in keystone mode, which is not "
            "available yet; run heat_lite in noauth mode with an "
            "[openstack] cloud"
        )
    return ("configured",)


def connection(plugin=None):
    """The cached openstacksdk Connection for ``plugin``'s identity."""
    key = identity(plugin)
    with _LOCK:
        conn = _CONNECTIONS.get(key)
        if conn is None:
            conn = _CONNECTIONS[key] = _configured()
        return conn


def reset():
    """Forget every cached connection (after a config reload; tests)."""
    with _LOCK:
        for conn in _CONNECTIONS.values():
            conn.close()
        _CONNECTIONS.clear()


def _configured():
    group = CONF[openstack_conf.GROUP]
    if group.cloud:
        files = [group.clouds_yaml] if group.clouds_yaml else None
        loader = os_config.OpenStackConfig(
            config_files=files, load_envvars=False
        )
        try:
            region = loader.get_one(
                cloud=group.cloud,
                region_name=group.region_name,
                interface=group.interface,
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
    )
