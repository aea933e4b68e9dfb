"""Stacks through the Heat API: waiting for a status, templates,
cleaning up."""

import contextlib
import os

from heatclient import exc as heat_exc

from harness import polling
from heat_lite.resources import test_resource


def http_error(call):
    """Run ``call`` and return the heatclient HTTP error it must raise."""
    try:
        call()
    except heat_exc.HTTPException as exc:
        return exc
    raise AssertionError("no error raised")


@contextlib.contextmanager
def holding(ledger, name):
    """While in the block, every action of a TestResource whose ``hold``
    is ``name`` waits (the engine's ``test_resource_ledger`` is
    ``ledger``): a test looks at an operation in progress for as long as
    it needs, then lets it end, with no timer to race."""
    path = test_resource.hold_path(ledger, name)
    open(path, "w").close()
    try:
        yield
    finally:
        os.remove(path)


def wait_for_status(heat, stack_id, expected, timeout=120):
    """Poll until the stack reaches ``expected`` (or a final state).

    :returns: the stack (None for ``DELETE_COMPLETE`` once it is gone).
    :raises AssertionError: on a different final state or the deadline.
    """
    seen = {}

    def reached():
        try:
            stack = heat.stacks.get(stack_id, resolve_outputs=False)
        except heat_exc.HTTPNotFound:
            if expected == "DELETE_COMPLETE":
                return [None]
            raise
        seen["stack"] = stack
        status = stack.stack_status
        if status == expected:
            return [stack]
        if not status.endswith("IN_PROGRESS"):
            raise AssertionError(
                "stack %s is %s (%s), expected %s"
                % (stack_id, status, stack.stack_status_reason, expected)
            )
        return None

    def describe():
        stack = seen.get("stack")
        return "stack %s %s (still %s)" % (
            stack_id,
            expected,
            stack.stack_status if stack else None,
        )

    return polling.until(reached, timeout, describe)[0]


def delete_all(heat, timeout=120):
    """Delete every stack of ``heat``'s project and wait until they are
    gone: a test's finalizer, so that a test failing half-way leaves no
    physical resources behind for the next tests' leak checks (a
    deployment is shared by the tests of one worker)."""
    ids = [s.id for s in heat.stacks.list()]
    for stack_id in ids:
        try:
            heat.stacks.delete(stack_id)
        except heat_exc.HTTPNotFound:
            pass
    for stack_id in ids:
        try:
            wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout)
        except AssertionError:
            # Deleted while an operation ran: delete it again.
            heat.stacks.delete(stack_id)
            wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout)


def template(resources, outputs=None, version="2018-08-31", **extra):
    tmpl = {"heat_template_version": version, "resources": resources}
    if outputs:
        tmpl["outputs"] = outputs
    tmpl.update(extra)
    return tmpl


def chain(n, rtype="OS::Heat::None", **props):
    """n resources, each depending on the previous one."""
    resources = {}
    for i in range(n):
        res = {"type": rtype}
        if props:
            res["properties"] = dict(props)
        if i:
            res["depends_on"] = "r%d" % (i - 1)
        resources["r%d" % i] = res
    return template(resources)


def flat(n, rtype="OS::Heat::None", **props):
    resources = {}
    for i in range(n):
        res = {"type": rtype}
        if props:
            res["properties"] = dict(props)
        resources["r%d" % i] = res
    return template(resources)


def create(heat, name, tmpl, **kwargs):
    body = heat.stacks.create(stack_name=name, template=tmpl, **kwargs)
    return body["stack"]["id"]
