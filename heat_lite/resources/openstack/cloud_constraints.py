"""Custom constraints that ask the cloud: ``nova.flavor``, ``glance.image``,
``neutron.network`` and the like.

Registered with the template layer's custom constraint registry when the
OpenStack types load, so template parameters and resource properties
that name them are checked at validate and before each create or update:
the value must name (by name or ID) exactly one such thing visible to the
identity the types act as. Answers are cached for ``TTL`` seconds (a
template often names the same image many times). When no cloud is
configured, and in keystone mode (where the identity is the stack's
trust, which a template-level check does not have), the constraints
accept every value, as Heat does for services it cannot reach: the
resource's own request will fail with the cloud's message instead.
"""

import threading
import time

from heat_lite.engine.template import constraints
from heat_lite.resources.openstack import client

TTL = 30.0
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
_LOCK = threading.Lock()
_CACHE = {}


def _exists(service, finder, value):

    try:
        conn = client.connection()
    except client.CloudUnavailable:
        return True
    try:
        found = getattr(getattr(conn, service), finder)(
            value, ignore_missing=True
        )
    except client.sdk_exc.DuplicateResource:
        return False
    return found is not None


def checker(name):
    """``checker(value) -> bool`` for constraint ``name``, cached."""
    service, finder = FINDERS[name]

    def check(value):
        key = (name, value)
        now = time.monotonic()
        with _LOCK:
            hit = _CACHE.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        answer = _exists(service, finder, value)
        with _LOCK:
            _CACHE[key] = (now + TTL, answer)
        return answer

    return check


def forget():
    """Drop every cached answer (tests)."""
    with _LOCK:
        _CACHE.clear()


def register():
    for name in FINDERS:
        constraints.register_custom(name, checker(name))
