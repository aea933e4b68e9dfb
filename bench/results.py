"""The records a run produces, one per (topology, scenario, shape, N).

A record says what ran and how it ended (``ok``, ``timeout``, ``failed``,
``skipped`` with a reason), its seconds, and the costs the processes
counted: raw and net totals and, for the report, net cost per resource.
"""

import threading

from bench import machine

STATUSES = ("ok", "timeout", "failed", "skipped")


class Results:
    """The growing list of records of one run (thread-safe)."""

    def __init__(self, echo=None):
        self._lock = threading.Lock()
        self.records = []
        self.echo = echo

    def add(
        self,
        topology,
        scenario,
        shape,
        n,
        status="ok",
        seconds=None,
        costs=None,
        resources=None,
        reason=None,
        **extra,
    ):
        """Append a record.

        :param n: the stack size (or the number of stacks of a
            throughput phase).
        :param resources: how many resource operations ``costs`` pays
            for; defaults to ``n``.
        """
        assert status in STATUSES, status
        record = {
            "topology": topology,
            "scenario": scenario,
            "shape": shape,
            "n": n,
            "status": status,
            "seconds": None if seconds is None else round(seconds, 4),
            "resources": resources or n,
            # How busy the (shared) machine was as the operation ended.
            "load_average": machine.load_average(),
        }
        if reason:
            record["reason"] = reason
        if costs is not None:
            per = resources or n
            record["costs"] = {
                k: round(v, 2) if isinstance(v, float) else v
                for k, v in costs.items()
                if k not in ("raw", "net")
            }
            record["costs"]["raw"] = costs["raw"]
            record["costs"]["net"] = {
                k: round(v, 2) for k, v in costs["net"].items()
            }
            record["per_resource"] = {
                k: round(v / per, 3) for k, v in costs["net"].items()
            }
            record["rss_kb"] = costs["rss_kb"]
        if extra:
            record["extra"] = extra
        with self._lock:
            self.records.append(record)
        if self.echo is not None:
            self.echo(describe(record))
        return record

    def find(self, topology=None, scenario=None, shape=None, status=None):
        return [
            r
            for r in self.records
            if (topology is None or r["topology"] == topology)
            and (scenario is None or r["scenario"] == scenario)
            and (shape is None or r["shape"] == shape)
            and (status is None or r["status"] == status)
        ]


def describe(record):
    """One progress line about a record."""
    line = "[%s] %s %s N=%s: %s" % (
        record["topology"],
        record["scenario"],
        record["shape"],
        record["n"],
        record["status"],
    )
    if record["seconds"] is not None:
        line += " %.3f s" % record["seconds"]
    per = record.get("per_resource")
    if per:
        line += " | per resource: %.2f SQL, %.2f txn, %.2f casts" % (
            per.get("sql_statements", 0),
            per.get("sql_commits", 0),
            per.get("rpc_casts", 0),
        )
        cpu = per.get("cpu_ms_engine", per.get("cpu_ms_all"))
        if cpu is not None:
            line += ", %.2f engine CPU ms" % cpu
    if record.get("reason"):
        line += " (%s)" % record["reason"][:300]
    return line
