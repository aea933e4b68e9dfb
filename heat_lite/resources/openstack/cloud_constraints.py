"""Custom constraints that ask the cloud: ``nova.flavor``, ``glance.image``,
``neutron.network`` and the like.

Registered with the template layer's custom constraint registry when the
OpenStack types load, so template parameters and resource properties
that name them are checked at validate and before each create or update:
the value must name (by name or ID) exactly one such thing visible to the
identity the check acts as (``client.acting_as``):

* noauth mode: the configured cloud;
* keystone mode, before a resource's create or update: the stack's trust;
* keystone mode, at validate (a stack create, update, preview or
  template validate): the requesting user, with the token of the request
  re-scoped at Keystone.

Answers are cached for ``TTL`` seconds per project (a template often
names the same image many times, and a project's users see the same
things). With no identity to ask as (no cloud configured, a keystone
mode check without a token or trust) and when the cloud cannot answer
(unreachable, a token refused), the constraints accept the value, as
Heat does for services it cannot reach: the resource's own request will
fail with the cloud's message instead. Such answers are not cached.
"""

import logging
import threading
import time

from keystoneauth1 import exceptions as ks_exc

from heat_lite.engine.template import constraints
from heat_lite.resources.openstack import client

TTL = 30.0
MAX_ANSWERS = 10000  # past that, expired answers are dropped
# constraint name: (service proxy attribute, finder)
FINDERS = {
    "nova.flavor": ("compute", "find_flavor"),
    "nova.keypair": ("compute", "find_keypair"),
    "glance.image": ("image", "find_image"),
    "neutron.network": ("network", "find_network"),
    "neutron.subnet": ("network", "find_subnet"),
    "neutron.port": ("network", "find_port"),
    "neutron.router": ("network", "find_router"),
    "neutron.security_group": ("network", "find_security_group"),
}
LOG = logging.getLogger(__name__)
_LOCK = threading.Lock()
_CACHE = {}


def _exists(acting, service, finder, value):
    """True/False, or None when the cloud could not answer."""
    try:
        # Through find_id: the create that follows the check (and the
        # checks of the other resources starting with it) finds it there.
        found = client.find_id(
            acting.connection(), service, finder, value, ignore_missing=True
        )
    except client.sdk_exc.DuplicateResource:
        return False
    except (
        client.CloudUnavailable,
        client.sdk_exc.SDKException,
        ks_exc.ClientException,
    ) as exc:
        LOG.info("Cannot check %s %s: %s", finder, value, exc)
        return None
    return found is not None


def checker(name):
    """``checker(value) -> bool`` for constraint ``name``, cached."""
    service, finder = FINDERS[name]

    def check(value):
        acting = client.acting()
        scope = acting.project()
        if scope is None:
            return True
        key = (scope, name, value)
        now = time.monotonic()
        with _LOCK:
            hit = _CACHE.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        answer = _exists(acting, service, finder, value)
        if answer is None:
            return True
        with _LOCK:
            _CACHE[key] = (now + TTL, answer)
            if len(_CACHE) > MAX_ANSWERS:
                _drop_expired(now)
        return answer

    return check


def _drop_expired(now):
    for key in [k for k, (until, _) in _CACHE.items() if until <= now]:
        del _CACHE[key]


def forget():
    """Drop every cached answer (tests)."""
    with _LOCK:
        _CACHE.clear()


def register():
    for name in FINDERS:
        constraints.register_custom(name, checker(name))
