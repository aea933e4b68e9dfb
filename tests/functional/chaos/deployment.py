"""heat_lite on the chaos services: an API and two engine hosts.

The API and engine ``a`` run in the root namespace; engine ``b`` runs in
the chaos network namespace, so cutting the veth partitions that engine
host alone. Every process reaches the database and the broker at the
host end of the veth, where the private servers listen.
"""

import uuid

from harness import deployment as base

ENGINES = ("engine_a", "engine_b")

# Short enough that a chaos scenario converges in seconds.
_CHAOS_CONF = """
[engine]
stall_timeout = 5
"""


class ChaosDeployment(base.Deployment):
    """A Deployment whose database server, broker and engine-b namespace
    are the chaos fixtures' (``db`` has ``create_database(name)``)."""

    def __init__(self, kind, workdir, db, rabbit, namespace):
        super().__init__(
            kind, workdir, engine_workers=len(ENGINES), extra_conf=_CHAOS_CONF
        )
        self.db = db
        self.rabbit = rabbit
        self.namespace = namespace

    def start(self):
        db_url = self.db.create_database(
            "heat_lite_%s" % uuid.uuid4().hex[:10]
        )
        suffix = uuid.uuid4().hex[:8]
        with open(self.config, "w") as f:
            f.write(
                base._CONFIG.format(
                    transport=self.rabbit.transport_url,
                    db=db_url,
                    port=self.port,
                    suffix=suffix,
                    ledger=self.ledger,
                )
                + self.extra_conf
            )
        self.db_url = db_url
        self.transport = self.rabbit.transport_url
        self.manage("db", "sync")
        self._spawn("engine_a", "heat-lite-engine", "--workers", "1")
        self._spawn(
            "engine_b",
            "heat-lite-engine",
            "--workers",
            "1",
            prefix=self.namespace.prefix(),
        )
        self._spawn("api", "heat-lite-api")
        self._wait_for_api()
        return self

    def engine_pid(self, key):
        """PID of engine ``key`` (``--workers 1`` runs the engine in the
        process itself; ``ip netns exec`` execs it)."""
        return self.procs[key].pid
