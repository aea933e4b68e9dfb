"""A bug in a plugin fails its resource visibly, once, and never loops.

``OS::Heat::TestResource`` with ``poison: <step>`` raises an unexpected
ZeroDivisionError at that step of the plugin contract, as a buggy plugin
would. Whatever the step (handler, completion check, replacement decision,
attributes; in create, update and delete), the resource fails with the
exception's text in its status reason and in an event, the engine's log
has exactly one traceback for it, and the stack fails (or rolls back)
within seconds, well before the watchdog's stall timeout would re-drive
anything.
"""

import os
import time
import uuid

import pytest

from harness import deployment as deployment_mod
from harness import helpers, polling
from tests.functional import conftest

TR = "OS::Heat::TestResource"
# The deployment's stall_timeout is 10 s: a failure reached sooner was not
# helped by the watchdog.
FAST = 8


@pytest.fixture(scope="module", params=conftest.KINDS)
def deployment(request, tmp_path_factory):
    """A deployment of this module's own: the stacks whose delete is
    poisoned stay behind (with their physical resources in the ledger),
    which must not fail the leak checks of other modules."""
    yield from deployment_mod.running(
        request.param, tmp_path_factory.mktemp("faults-" + request.param)
    )


@pytest.fixture
def heat(deployment):
    return deployment.client()


def _token():
    return "tok-" + uuid.uuid4().hex[:10]


def _poisoned(value, poison, **props):
    return helpers.template(
        {
            "bad": {
                "type": TR,
                "properties": dict(value=value, poison=poison, **props),
            }
        }
    )


def _tracebacks(deployment, line):
    """How many logged tracebacks end with the exception line ``line``.

    A traceback starts at "Traceback (most recent call last):"; oslo.log
    may put the same prefix (time, pid, level, logger) before each of its
    lines; its last line is the first one, prefix removed, that is not
    indented.
    """
    count = 0
    for key in deployment.procs:
        path = os.path.join(deployment.workdir, "%s.log" % key)
        with open(path, errors="replace") as f:
            count += _count_tracebacks(f.read().splitlines(), line)
    return count


def _count_tracebacks(lines, wanted):
    count, prefix = 0, None
    for text in lines:
        if prefix is None:
            if text.endswith("Traceback (most recent call last):"):
                prefix = text[: -len("Traceback (most recent call last):")]
            continue
        rest = text[len(prefix) :] if text.startswith(prefix) else text
        if rest.startswith(" "):
            continue
        count += rest == wanted
        prefix = None
    return count


def _one_traceback(deployment, text):
    def count():
        return _tracebacks(deployment, "ZeroDivisionError: " + text)

    polling.until(count, 10, "a traceback of %r" % text)
    polling.stays(lambda: count() == 1, 1.5, "one traceback of %r" % text)


def _assert_visible(deployment, heat, stack_id, action, text):
    # As in Heat, a resource whose delete failed is still listed.
    resource = heat.resources.get(stack_id, "bad")
    assert resource.resource_status == action + "_FAILED"
    assert text in resource.resource_status_reason
    assert "ZeroDivisionError" in resource.resource_status_reason
    listed = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert listed["bad"].resource_status == action + "_FAILED"
    events = [
        e
        for e in heat.events.list(stack_id, resource_name="bad")
        if e.resource_status == action + "_FAILED"
    ]
    assert any(text in e.resource_status_reason for e in events), events
    # Exactly one traceback, written when the failure was handled (and
    # still one a moment later, when a looping re-drive would have logged
    # another one).
    _one_traceback(deployment, text)


@pytest.mark.parametrize(
    "step", ["handle_create", "check_create_complete", "attributes"]
)
def test_create_fails_visibly(deployment, heat, step):
    token = _token()
    started = time.time()
    stack_id = helpers.create(heat, "poison-" + token, _poisoned(token, step))
    stack = helpers.wait_for_status(
        heat, stack_id, "CREATE_FAILED", timeout=60
    )
    assert time.time() - started < FAST
    text = "poisoned %s of %s" % (step, token)
    assert text in stack.stack_status_reason
    _assert_visible(deployment, heat, stack_id, "CREATE", text)


def test_create_rolls_back(deployment, heat):
    token = _token()
    started = time.time()
    stack_id = helpers.create(
        heat,
        "poison-rb-" + token,
        _poisoned(token, "handle_create"),
        disable_rollback=False,
    )
    helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE", timeout=60)
    assert time.time() - started < FAST
    text = "poisoned handle_create of %s" % token
    events = heat.events.list(stack_id, resource_name="bad")
    assert any(
        e.resource_status == "CREATE_FAILED"
        and text in e.resource_status_reason
        for e in events
    )
    _one_traceback(deployment, text)


def test_a_create_rolled_back_with_parameters_is_shown_and_updated(heat):
    """A create's rollback leaves the empty template as the stack's; the
    parameter values the create was given must not come with it (they
    made the stored goal unbindable: GET of the stack, and the next
    update, answered 400 "The Parameter (image) was not defined", which
    every build of an app whose first deploy failed then hit)."""

    def template(fail):
        return helpers.template(
            {
                "r": {
                    "type": "OS::Heat::TestResource",
                    "properties": {
                        "value": {"get_param": "image"},
                        "fail": fail,
                    },
                }
            },
            parameters={"image": {"type": "string"}},
        )

    stack_id = helpers.create(
        heat,
        "rolled-" + _token(),
        template(True),
        environment={"parameters": {"image": "one"}},
        disable_rollback=False,
    )
    helpers.wait_for_status(heat, stack_id, "ROLLBACK_COMPLETE", timeout=60)
    assert heat.stacks.get(stack_id).parameters["OS::stack_id"] == stack_id
    heat.stacks.update(
        stack_id,
        template=template(False),
        environment={"parameters": {"image": "two"}},
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=60)
    output = heat.resources.get(stack_id, "r").attributes["output"]
    assert output == "two"


@pytest.mark.parametrize(
    "step", ["handle_update", "check_update_complete", "needs_replace"]
)
def test_update_fails_visibly(deployment, heat, step):
    token = _token()
    stack_id = helpers.create(heat, "poison-up-" + token, _poisoned(token, ""))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
    changed = token + "-2"
    started = time.time()
    heat.stacks.update(stack_id, template=_poisoned(changed, step))
    stack = helpers.wait_for_status(
        heat, stack_id, "UPDATE_FAILED", timeout=60
    )
    assert time.time() - started < FAST
    text = "poisoned %s of %s" % (step, changed)
    assert text in stack.stack_status_reason
    _assert_visible(deployment, heat, stack_id, "UPDATE", text)


@pytest.mark.parametrize("step", ["handle_delete", "check_delete_complete"])
def test_delete_fails_visibly(deployment, heat, step):
    token = _token()
    stack_id = helpers.create(
        heat, "poison-del-" + token, _poisoned(token, step)
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=60)
    started = time.time()
    heat.stacks.delete(stack_id)
    stack = helpers.wait_for_status(
        heat, stack_id, "DELETE_FAILED", timeout=60
    )
    assert time.time() - started < FAST
    text = "poisoned %s of %s" % (step, token)
    assert text in stack.stack_status_reason
    _assert_visible(deployment, heat, stack_id, "DELETE", text)
