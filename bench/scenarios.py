"""Scenarios on one stack of N resources, for the flat and chain shapes.

For each size the runner builds, on a freshly started or settled
heat_lite:

* stack A (``OS::Heat::None``): ``create``; ``update_inplace`` (every
  resource's property ``v`` changes); ``update_half`` (half the resources
  removed, as many added); ``delete``;
* stack R (``OS::Heat::TestResource``): ``update_replace`` changes every
  resource's ``update_replace_value``, so each is replaced
  (create-before-delete) -- ``OS::Heat::None`` is only ever replaced on a
  type change;
* stacks B and C: ``concurrent_update`` sends update #2 while #1 is half
  way through on B, and times #2 from accepted to COMPLETE; then the same
  update alone on the fresh stack C; the ratio of the two is the figure.

Every operation is timed from the request to the poll that sees it
COMPLETE, and metered by ``Topology.measure``.
"""

import itertools
import time

from bench import api, templates

STACK_A = ("create", "update_inplace", "update_half", "delete")
SIZE_SCENARIOS = STACK_A + ("update_replace", "concurrent_update")
_SEQ = itertools.count()
# When to send update #2: this fraction of the time the same update took
# alone, so that #1 is well under way but far from done.
DELAY_FRACTION = 0.3


class Context:
    """What the scenarios of one topology share."""

    def __init__(
        self, topo, results, selected, timeout, full_max, concurrent_sizes
    ):
        self.topo = topo
        self.results = results
        self.selected = set(selected)
        self.timeout = timeout
        self.full_max = full_max
        self.concurrent_sizes = set(concurrent_sizes)
        self.inplace_seconds = {}

    @property
    def client(self):
        return self.topo.client

    def name(self, what, shape, n):
        return "%s-%s-%d-%d" % (what, shape, n, next(_SEQ))

    def op(self, scenario, shape, n, fn, record=True, **extra):
        """Meter ``fn`` (returns seconds); record it if asked.

        OpFailed and OpTimeout are recorded, then re-raised.
        """
        try:
            seconds, costs = self.topo.measure(fn)
        except api.OpTimeout as exc:
            self.results.add(
                self.topo.name, scenario, shape, n, "timeout", reason=str(exc)
            )
            raise
        except api.OpFailed as exc:
            self.results.add(
                self.topo.name, scenario, shape, n, "failed", reason=str(exc)
            )
            raise
        if record:
            # How long the API took to accept the request: the engine
            # stores the whole traversal before it answers.
            extra.setdefault(
                "accept_seconds", round(self.client.last_accept or 0.0, 4)
            )
            self.results.add(
                self.topo.name,
                scenario,
                shape,
                n,
                seconds=seconds,
                costs=costs,
                **extra,
            )
        return seconds

    def wanted(self, *scenarios):
        return bool(self.selected.intersection(scenarios))


def run_size(ctx, shape, n):
    """Run the selected scenarios of one shape and size.

    :raises api.OpTimeout: an operation overran; the caller restarts
        heat_lite and skips larger sizes of this shape.
    :raises api.OpFailed: an operation failed (recorded); the caller
        restarts heat_lite, as stacks may be left in flight.
    """
    if n > ctx.full_max:
        if shape == "flat" and ctx.wanted("create", "delete"):
            _stack_a(ctx, shape, n, big=True)
        return
    steps = (
        (STACK_A, _stack_a),
        (("update_replace",), _stack_r),
        (("concurrent_update",), _concurrent),
    )
    for scenarios, step in steps:
        if not ctx.wanted(*scenarios):
            continue
        if step is _concurrent and n not in ctx.concurrent_sizes:
            continue
        step(ctx, shape, n)


def _stack_a(ctx, shape, n, big=False):
    client, sel, timeout = ctx.client, ctx.selected, ctx.timeout
    holder = {}

    def _create():
        holder["stack"], seconds = client.create_and_wait(
            ctx.name("a", shape, n), templates.none_stack(shape, n, 1), timeout
        )
        return seconds

    ctx.op("create", shape, n, _create, record="create" in sel)
    stack = holder["stack"]
    if not big:
        seconds = ctx.op(
            "update_inplace",
            shape,
            n,
            lambda: client.update_and_wait(
                stack, templates.none_stack(shape, n, 2), timeout
            ),
            record="update_inplace" in sel,
        )
        ctx.inplace_seconds[shape, n] = seconds
        if "update_half" in sel:
            ctx.op(
                "update_half",
                shape,
                n,
                lambda: client.update_and_wait(
                    stack, templates.half_replaced(shape, n, 2), timeout
                ),
            )
    ctx.op(
        "delete",
        shape,
        n,
        lambda: client.delete_and_wait(stack, timeout),
        record="delete" in sel,
    )


def _stack_r(ctx, shape, n):
    client, timeout = ctx.client, ctx.timeout
    holder = {}

    def _create():
        holder["stack"], seconds = client.create_and_wait(
            ctx.name("r", shape, n),
            templates.test_stack(shape, n, "a"),
            timeout,
        )
        return seconds

    created = ctx.op("update_replace", shape, n, _create, record=False)
    stack = holder["stack"]
    ctx.op(
        "update_replace",
        shape,
        n,
        lambda: client.update_and_wait(
            stack, templates.test_stack(shape, n, "b"), timeout
        ),
        resource_type=templates.TEST,
        create_seconds=round(created, 4),
    )
    ctx.op(
        "update_replace",
        shape,
        n,
        lambda: client.delete_and_wait(stack, timeout),
        record=False,
    )


def _concurrent(ctx, shape, n):
    client, timeout = ctx.client, ctx.timeout
    tmpl = templates.none_stack
    stacks = {}

    def _create(key):
        stacks[key], seconds = client.create_and_wait(
            ctx.name(key, shape, n), tmpl(shape, n, 1), timeout
        )
        return seconds

    created = ctx.op(
        "concurrent_update", shape, n, lambda: _create("b"), record=False
    )
    ctx.op("concurrent_update", shape, n, lambda: _create("c"), record=False)
    delay = DELAY_FRACTION * ctx.inplace_seconds.get((shape, n), created)
    info = {"value": 1}

    def _both():
        """#1, then #2 once #1 has run ``delay`` s; seconds from #2
        accepted to COMPLETE. If #1 was already over when #2 went out,
        try again sooner: an update after another is not the case
        measured."""
        for attempt in range(1, 4):
            info.update(attempt=attempt, delay=delay / 3 ** (attempt - 1))
            info["value"] += 2
            client.update(stacks["b"], tmpl(shape, n, info["value"] - 1))
            time.sleep(info["delay"])
            info["first"] = client.status(stacks["b"])[0]
            client.update(stacks["b"], tmpl(shape, n, info["value"]))
            seconds = client.wait(
                stacks["b"], "UPDATE_COMPLETE", timeout, time.monotonic()
            )
            if info["first"].endswith("IN_PROGRESS"):
                break
        return seconds

    # #1 + #2 right before #2 alone, so that both see the same database
    # and the same caches; "alone" updates the fresh stack C to the same
    # template #2 sent.
    second, costs = _metered(ctx, "concurrent_update", shape, n, _both)
    alone = ctx.op(
        "concurrent_update",
        shape,
        n,
        lambda: client.wait(
            stacks["c"],
            "UPDATE_COMPLETE",
            timeout,
            _accepted(client, stacks["c"], tmpl(shape, n, info["value"])),
        ),
        record=False,
    )
    ctx.results.add(
        ctx.topo.name,
        "concurrent_update",
        shape,
        n,
        seconds=second,
        costs=costs,
        alone_seconds=round(alone, 4),
        ratio=round(second / alone, 3) if alone else None,
        delay_seconds=round(info["delay"], 4),
        attempts=info["attempt"],
        first_update_status_at_second=info["first"],
        converged=_converged(
            client, stacks["b"], "r%d" % (n - 1), info["value"]
        ),
    )

    def _delete_both():
        for stack in stacks.values():
            client.delete(stack)
        for stack in stacks.values():
            client.wait(stack, "DELETE_COMPLETE", timeout)
        return 0.0

    ctx.op("concurrent_update", shape, n, _delete_both, record=False)


def _accepted(client, stack, template):
    """Send an update; return the moment it was accepted."""
    client.update(stack, template)
    return time.monotonic()


def _metered(ctx, scenario, shape, n, fn):
    try:
        return ctx.topo.measure(fn)
    except (api.OpTimeout, api.OpFailed) as exc:
        status = "timeout" if isinstance(exc, api.OpTimeout) else "failed"
        ctx.results.add(
            ctx.topo.name, scenario, shape, n, status, reason=str(exc)
        )
        raise


def _converged(client, stack, resource, value):
    """Whether ``resource`` ended on the newest template's property."""
    try:
        versions = client.resource_versions(stack, resource)
    except api.OpFailed:
        return None
    current = [v for v in versions if v.get("role") == "current"]
    return (
        len(current) == 1
        and (current[0].get("properties") or {}).get("v") == value
    )
