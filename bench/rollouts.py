"""The ``rollout`` scenario: one rollout over K ten-resource stacks, and
what the rollout itself costs the engines beyond the stack updates.

The K stacks (``--rollout-sizes``, 100 and 1,000) are created through the
API, so that they are real converged stacks the engine updates like any
other (writing them straight into the database, as ``stack_query`` does,
leaves out what only the engine writes). Each has 10
``OS::Heat::TestResource`` whose ``value`` is the ``php_version``
parameter, and an output ``healthy``, the first resource's ``output``.

For each size two operations are metered (``Topology.measure``), each on
the same stacks with a new ``php_version``:

* ``rollout``: ``POST /rollouts`` with that PATCH, the output check
  ``healthy`` equals the new version, batches of ``batch`` (10 for 100
  stacks, 100 for 1,000), no canary; timed until the rollout is
  COMPLETE;
* ``patches``: the same PATCHes with the same ``verify`` sent by the
  client, a batch of ``batch`` stacks at a time, each batch waited for
  (until every stack of it is ``UPDATE_COMPLETE``) before the next.

The overhead per target is the difference of the engines' CPU
milliseconds (both engine processes, from ``/proc``) divided by K. The
client's polls are subtracted from both: the stack polls of ``patches``
at their calibrated cost (``Topology``), the rollout polls at the cost of
one ``GET /rollouts/{id}`` of this rollout measured right after it.
"""

import concurrent.futures
import os
import time

from bench import api, queries

RESOURCES = queries.RESOURCES
PREFIX = "rb-"
CREATE_THREADS = 8
PATCH_THREADS = 16
ROLLOUT_POLL = 2.0
POLL_CALIBRATION = 10


def template():
    """The stack-query scenario's stacks, with the output checked."""
    tmpl = queries.template()
    tmpl["outputs"] = {"healthy": {"value": {"get_attr": ["r0", "output"]}}}
    return tmpl


def verify(version):
    return {
        "timeout": 600,
        "checks": [{"type": "output", "output": "healthy", "equals": version}],
    }


def selector(stacks):
    """A name glob matching the first ``stacks`` stacks (a power of ten
    up to 10,000) of the ones ``_create`` made."""
    digits = len(str(stacks)) - 1
    return {"stack_name": PREFIX + "0" * (4 - digits) + "?" * digits}


def _name(i):
    return PREFIX + "%04d" % i


class RolloutClient:
    """The rollout calls of the REST API, and PATCH with ``verify``."""

    def __init__(self, client):
        self.client = client

    def create(self, body):
        resp = self.client._request("POST", "/rollouts", body, expect=(201,))
        return resp.json()["rollout"]["id"]

    def show(self, rollout_id):
        path = "/rollouts/%s" % rollout_id
        return self.client._request("GET", path).json()["rollout"]

    def wait(self, rollout_id, timeout, started):
        polls = 0
        while True:
            rollout = self.show(rollout_id)
            polls += 1
            if rollout["status"] not in ("IN_PROGRESS", "PAUSED"):
                return rollout, time.monotonic() - started, polls
            if time.monotonic() - started > timeout:
                raise api.OpTimeout(
                    "rollout %s still %s after %.0f s: %s"
                    % (
                        rollout_id,
                        rollout["status"],
                        timeout,
                        rollout["counts"],
                    )
                )
            time.sleep(ROLLOUT_POLL)

    def patch(self, stack, version):
        self.client._request(
            "PATCH",
            "/stacks/%s/%s" % stack,
            {
                "parameters": {"php_version": version},
                "verify": verify(version),
            },
            expect=(202,),
        )


def _create(topo, start, stop, timeout):
    """Create stacks ``start``..``stop - 1`` (CREATE_COMPLETE)."""
    tally = api.Tally()

    def one(i):
        client = topo.make_client(tally, poll_floor=0.2)
        client._request(
            "POST",
            "/stacks",
            {
                "stack_name": _name(i),
                "template": template(),
                "parameters": {"php_version": "5.4.45"},
                "disable_rollback": True,
            },
            expect=(201,),
        )

    with concurrent.futures.ThreadPoolExecutor(CREATE_THREADS) as pool:
        list(pool.map(one, range(start, stop)))
    client = topo.make_client(tally, poll_floor=0.5)
    stacks = client.list_stacks()
    mine = sorted(s for s in stacks if s[0].startswith(PREFIX))
    deadline = time.monotonic() + timeout
    # (The first ``start`` ones, made for a smaller size, are updated.)
    for stack in mine[start:]:
        client.wait(stack, "CREATE_COMPLETE", deadline - time.monotonic())
    return mine


def _patches(topo, stacks, batch, version, timeout):
    """Send the rollout's PATCH to ``stacks``, ``batch`` at a time, each
    batch awaited; returns (seconds, costs)."""
    tally = api.Tally()

    def one(stack):
        client = topo.make_client(tally, poll_floor=0.5)
        start = time.monotonic()
        RolloutClient(client).patch(stack, version)
        client.wait(stack, "UPDATE_COMPLETE", timeout, start)

    def run():
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(PATCH_THREADS) as pool:
            for first in range(0, len(stacks), batch):
                list(pool.map(one, stacks[first : first + batch]))
        return time.monotonic() - start

    return topo.measure(run, tally=tally)


def _rollout(topo, stacks, batch, version, timeout):
    """One rollout over ``stacks``; returns (seconds, costs, rollout)."""
    tally = api.Tally()
    client = RolloutClient(topo.make_client(tally))
    holder = {}
    body = {
        "name": "bench-%s" % version,
        "selector": selector(len(stacks)),
        "update": {"parameters": {"php_version": version}},
        "verify": verify(version),
        "strategy": {"canary": 0, "batch_size": batch, "max_failures": 0},
    }

    def run():
        start = time.monotonic()
        rollout_id = client.create(body)
        holder["rollout"], seconds, holder["polls"] = client.wait(
            rollout_id, timeout, start
        )
        return seconds

    seconds, costs = topo.measure(run, tally=tally)
    rollout = holder["rollout"]
    # The client's rollout polls cost the engine a read of every target:
    # measured now, on the finished rollout, and taken off.
    _, poll_costs = topo.measure(
        lambda: [client.show(rollout["id"]) for _ in range(POLL_CALIBRATION)],
        tally=tally,
    )
    per_poll = {k: v / POLL_CALIBRATION for k, v in poll_costs["net"].items()}
    costs["rollout_polls"] = holder["polls"]
    costs["rollout_poll_cost"] = per_poll
    costs["net"] = {
        k: max(0.0, v - per_poll.get(k, 0.0) * holder["polls"])
        for k, v in costs["net"].items()
    }
    return seconds, costs, rollout


def run_rollouts(topo, results, sizes, timeout):
    """The rollout scenario at every size (ascending)."""
    made = []
    version = iter("5.4.%d" % v for v in range(46, 100))
    for size in sorted(sizes):
        batch = max(1, size // 10)
        started = time.monotonic()
        try:
            made = _create(topo, len(made), size, timeout * 4)
            created = time.monotonic() - started
            stacks = made[:size]
            topo.forget()
            p_seconds, p_costs = _patches(
                topo, stacks, batch, next(version), timeout
            )
            r_seconds, r_costs, rollout = _rollout(
                topo, stacks, batch, next(version), timeout
            )
        except (api.OpFailed, api.OpTimeout) as exc:
            status = "timeout" if isinstance(exc, api.OpTimeout) else "failed"
            results.add(
                topo.name, "rollout", "-", size, status, reason=str(exc)
            )
            raise
        cpu_p = p_costs["net"].get("cpu_ms_engine", 0.0)
        cpu_r = r_costs["net"].get("cpu_ms_engine", 0.0)
        common = {
            "batch": batch,
            "create_seconds": round(created, 1),
            # The machine is shared: how busy it was as this ended.
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
        results.add(
            topo.name,
            "rollout",
            "patches",
            size,
            seconds=p_seconds,
            costs=p_costs,
            resources=size * RESOURCES,
            **common,
        )
        results.add(
            topo.name,
            "rollout",
            "rollout",
            size,
            "ok" if rollout["status"] == "COMPLETE" else "failed",
            seconds=r_seconds,
            costs=r_costs,
            resources=size * RESOURCES,
            rollout_status=rollout["status"],
            rollout_counts=rollout["counts"],
            engine_cpu_ms_patches=round(cpu_p, 1),
            engine_cpu_ms_rollout=round(cpu_r, 1),
            overhead_engine_cpu_ms_per_target=round((cpu_r - cpu_p) / size, 2),
            **common,
        )
