"""A network namespace joined to the root namespace by one veth pair.

A process started inside the namespace (``prefix() + command``) reaches
the host only through the veth: ``cut()`` takes the host end down (a
partition of that namespace's "host"), ``heal()`` brings it back. The
pair's addresses are 10.241.N.1/30 on the host end and .2 in the
namespace; ``route_via_host()`` also routes everything else through the
host end, so that addresses the host owns elsewhere (a service address
on a bridge, as tools/ha uses) are reached through the same veth.

Used by the chaos tests (tests/functional/chaos) and by the highly
available substrate (tools/ha), which records ``to_dict()`` to find and
remove its namespaces again after its runner died.
"""

import random
import subprocess
import uuid


class Unavailable(RuntimeError):
    """Namespaces or veth pairs cannot be made here (no root, no ip)."""


def _ip(*args):
    return subprocess.run(
        ["ip", *args], check=True, capture_output=True, text=True, timeout=30
    )


def _used_subnets():
    out = _ip("-4", "-o", "addr").stdout
    return {
        line.split()[3].split(".")[2]
        for line in out.splitlines()
        if " 10.241." in line
    }


class Namespace:
    """``<name>-<id>`` with veth ``<short><id>a`` (host) / ``...b``."""

    def __init__(self, name="hlchaos", short="hlc"):
        suffix = uuid.uuid4().hex[:6]
        self.name = "%s-%s" % (name, suffix)
        self.host_if = "%s%sa" % (short, suffix)
        self.ns_if = "%s%sb" % (short, suffix)
        used = _used_subnets()
        third = random.choice(
            [str(n) for n in range(1, 251) if str(n) not in used]
        )
        self.host_ip = "10.241.%s.1" % third
        self.ns_ip = "10.241.%s.2" % third
        self.created = False

    def to_dict(self):
        return {
            key: getattr(self, key)
            for key in ("name", "host_if", "ns_if", "host_ip", "ns_ip")
        }

    @classmethod
    def from_dict(cls, data):
        """The namespace ``to_dict()`` described (destroy() removes it)."""
        ns = cls.__new__(cls)
        ns.__dict__.update(data)
        ns.created = True
        return ns

    def create(self):
        """Make the namespace and the pair.

        :raises Unavailable: if we may not (the chaos tests skip, or fail
            in CI).
        """
        try:
            _ip("netns", "add", self.name)
            self.created = True
            _ip(
                "link",
                "add",
                self.host_if,
                "type",
                "veth",
                "peer",
                "name",
                self.ns_if,
            )
            _ip("link", "set", self.ns_if, "netns", self.name)
            _ip("addr", "add", self.host_ip + "/30", "dev", self.host_if)
            _ip("link", "set", self.host_if, "up")
            for args in (
                ("addr", "add", self.ns_ip + "/30", "dev", self.ns_if),
                ("link", "set", self.ns_if, "up"),
                ("link", "set", "lo", "up"),
            ):
                self.ip(*args)
        except (OSError, subprocess.CalledProcessError) as exc:
            self.destroy()
            raise Unavailable(getattr(exc, "stderr", None) or exc) from exc
        return self

    def ip(self, *args):
        """Run ``ip ARGS`` inside the namespace."""
        return _ip("netns", "exec", self.name, "ip", *args)

    def route_via_host(self):
        self.ip("route", "replace", "default", "via", self.host_ip)

    def prefix(self):
        """Command prefix that runs a program inside the namespace."""
        return ["ip", "netns", "exec", self.name]

    def cut(self):
        _ip("link", "set", self.host_if, "down")

    def heal(self):
        _ip("link", "set", self.host_if, "up")

    def isolate(self):
        """A silent partition: both ends stay up and every packet either
        way is dropped (a zero-length queue on each end), so connections
        hang as across a failed switch. ``cut()`` takes the host end down
        instead: the kernel then answers at once, and the host's packets
        to the namespace's address leave by the default route (on a
        machine whose gateway answers HTTP, something else answers)."""
        for prefix, dev in ((), self.host_if), (self.prefix(), self.ns_if):
            subprocess.run(
                [*prefix, "tc", "qdisc", "replace", "dev", dev, "root"]
                + ["pfifo", "limit", "0"],
                check=True,
                capture_output=True,
                timeout=30,
            )

    def rejoin(self):
        for prefix, dev in ((), self.host_if), (self.prefix(), self.ns_if):
            subprocess.run(
                [*prefix, "tc", "qdisc", "del", "dev", dev, "root"],
                capture_output=True,
                timeout=30,
            )

    def destroy(self):
        if not self.created:
            return
        subprocess.run(
            ["ip", "link", "del", self.host_if], capture_output=True
        )
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        self.created = False
