"""A network namespace joined to the root namespace by one veth pair.

An engine started inside the namespace (``prefix() + command``) reaches
the private services only through the veth: ``cut()`` takes the host end
down (a partition of that engine's host), ``heal()`` brings it back. The
only addresses used are the two ends of this pair (10.241.N.1/30 on the
host, .2 in the namespace); nothing is routed anywhere else.
"""

import random
import subprocess
import uuid

from harness import backends


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
    """``hlchaos-<id>`` with veth ``hlc<id>a`` (host) / ``hlc<id>b``."""

    def __init__(self):
        suffix = uuid.uuid4().hex[:6]
        self.name = "hlchaos-" + suffix
        self.host_if = "hlc%sa" % suffix
        self.ns_if = "hlc%sb" % suffix
        used = _used_subnets()
        third = random.choice(
            [str(n) for n in range(1, 251) if str(n) not in used]
        )
        self.host_ip = "10.241.%s.1" % third
        self.ns_ip = "10.241.%s.2" % third
        self.created = False

    def create(self):
        """Make the namespace and the pair; skip (fail in CI) if we may not."""
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
                _ip("netns", "exec", self.name, "ip", *args)
        except (OSError, subprocess.CalledProcessError) as exc:
            self.destroy()
            backends.unavailable("ip netns", getattr(exc, "stderr", exc))
        return self

    def prefix(self):
        """Command prefix that runs a program inside the namespace."""
        return ["ip", "netns", "exec", self.name]

    def cut(self):
        _ip("link", "set", self.host_if, "down")

    def heal(self):
        _ip("link", "set", self.host_if, "up")

    def destroy(self):
        if not self.created:
            return
        subprocess.run(
            ["ip", "link", "del", self.host_if], capture_output=True
        )
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        self.created = False
