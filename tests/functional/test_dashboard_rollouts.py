"""The rollout pages in real browsers against the real rollouts API
(``heat-lite-all``, noauth): a rollout started from the page over six
stacks whose ``healthy`` output fails under the new version for two of
them, followed live batch by batch and target by target, paused,
resumed, rolled back and (a second one) cancelled from the page, each
after a confirmation; what the page shows is checked against the API.
"""

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers, polling

pytestmark = pytest.mark.functional

OLD, NEW = "v1", "v2"
COUNT = 6
BROKEN = ("app-3", "app-4")
# Each update of ``app`` takes a second: a batch runs long enough for
# the page to see it running and for a pause to land between batches.
APP = """heat_template_version: 2018-08-31
parameters:
  version: {type: string, default: v1}
  broken_on: {type: string, default: none}
conditions:
  broken: {equals: [{get_param: version}, {get_param: broken_on}]}
resources:
  app:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: version}
      action_wait_secs: {update: 1}
outputs:
  healthy:
    value: {if: [broken, "no", "yes"]}
  version:
    value: {get_attr: [app, output]}
"""


@pytest.fixture(scope="module")
def heat_all(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("dash-rollouts")
    )


def _apps(heat):
    ids = {}
    for i in range(COUNT):
        name = "app-%d" % i
        ids[name] = helpers.create(
            heat,
            name,
            APP,
            parameters={"broken_on": NEW if name in BROKEN else "none"},
        )
    for stack_id in ids.values():
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return ids


def _versions(heat, ids):
    return {
        name: {o["output_key"]: o["output_value"] for o in s.outputs}[
            "version"
        ]
        for name, s in ((n, heat.stacks.get(i)) for n, i in ids.items())
    }


def _target(b, name):
    return b.attr('#batches tr[data-target="%s"]' % name, "data-status")


def _status(b):
    return b.attr("#rollout-status .badge", "data-status")


def _action(b, action):
    """Press an action's button once it is enabled, then Confirm."""
    selector = "#ro-" + action
    b.wait_for(
        selector + " enabled",
        lambda: b.css(selector) and b.css(selector)[0].is_enabled(),
    )
    b.click(selector)
    b.confirm()


def _start(b, url, project, name, batch, failures):
    b.open(url, "/%s/rollouts" % project)
    b.wait_for(
        "the empty state or the list",
        lambda: b.css("#rollout-list .empty, #rollout-list table"),
    )
    b.click("#rollout-new")
    rollout_id = b.submit(
        (
            ("#r-name", name),
            ("#r-stacks", "app-*"),
            ("#r-params", "version=" + NEW),
            ("#r-output", "healthy"),
            ("#r-equals", "yes"),
            ("#r-timeout", "3"),
            ("#r-canary", "1"),
            ("#r-batch", str(batch)),
            ("#r-failures", str(failures)),
        ),
        "#r-submit",
        "/%s/rollouts/" % project,
    )
    b.wait_css('#batches tr[data-target="app-0"]')
    return rollout_id


def _api(dep, project, rollout_id):
    response = requests.get(
        "%s/rollouts/%s" % (dep.endpoint(project), rollout_id), timeout=30
    )
    assert response.status_code == 200, response.text
    return response.json()["rollout"]


def test_rollout_live_pause_resume_and_rollback(heat_all, browser):
    b = browser
    project = "fleet-" + b.name
    heat = heat_all.client(project)
    ids = _apps(heat)
    b.open(heat_all.url, "/%s/stacks" % project)
    b.wait_for(
        "the rollouts link", lambda: b.css("#nav-rollouts:not([hidden])")
    )
    b.click("#nav-rollouts")
    b.wait_for(
        "no rollouts yet",
        lambda: "No rollouts" in (b.text("#rollout-list .empty") or ""),
    )
    rollout_id = _start(b, heat_all.url, project, "to-v2", 2, 3)
    # Batches: the canary (app-0), then two at a time.
    sections = [s.get_attribute("data-batch") for s in b.css(".batch")]
    assert sections == ["0", "1", "2", "3"]
    # The page, never reloaded, follows the rollout (the batches seen
    # running below prove it polls). The canary's passing states
    # (UPDATING, VERIFYING) can last less than a poll of the page, so
    # they are not waited for: a CI run at load 29 missed both.
    b.wait_for("the canary done", lambda: _target(b, "app-0") == "SUCCEEDED")
    _action(b, "pause")
    b.wait_for("PAUSED", lambda: _status(b) == "PAUSED")
    assert "Pause: accepted" in b.text("#message")
    # While paused no new batch starts: the last one stays waiting.
    polling.stays(
        lambda: _target(b, "app-5") == "PENDING",
        3,
        "the last batch waiting while paused",
    )
    assert _api(heat_all, project, rollout_id)["status"] == "PAUSED"
    _action(b, "resume")
    b.wait_for(
        "a batch of two running at once",
        lambda: (
            b.css('.batch[data-batch="3"][data-state="running"]')
            or b.css('.batch[data-batch="2"][data-state="running"]')
        ),
    )
    b.wait_for("COMPLETE", lambda: _status(b) == "COMPLETE", timeout=60)
    shown = {
        r.get_attribute("data-target"): r.get_attribute("data-status")
        for r in b.css("#batches tr[data-target]")
    }
    api = _api(heat_all, project, rollout_id)
    assert shown == {t["stack_name"]: t["status"] for t in api["targets"]}
    assert {n for n, s in shown.items() if s == "ROLLED_BACK"} == set(BROKEN)
    # A target rolled back is a failed change: drawn as a rollback, not
    # as the others' success.
    kinds = {
        r.get_attribute("data-target"): r.find_element(
            "css selector", ".badge"
        ).get_attribute("class")
        for r in b.css("#batches tr[data-target]")
    }
    assert {n for n, k in kinds.items() if "s-rollback" in k} == set(BROKEN)
    assert all("s-complete" in kinds[n] for n in set(ids) - set(BROKEN))
    assert b.text("#rollout-counts") == "SUCCEEDED: 4 · ROLLED_BACK: 2"
    assert all(
        b.attr('.batch[data-batch="%d"]' % i, "data-state") == "done"
        for i in range(4)
    )
    versions = _versions(heat, ids)
    assert {n for n, v in versions.items() if v == NEW} == set(ids) - set(
        BROKEN
    )
    # Roll the whole rollout back: every upgraded stack goes back.
    _action(b, "rollback")
    b.wait_for(
        "rolled back",
        lambda: (
            _status(b) == "CANCELLED"
            and "rolled back" in (b.text("#rollout-reason") or "")
        ),
        timeout=60,
    )
    assert set(_versions(heat, ids).values()) == {OLD}
    # The list shows it, finished.
    b.click("#main a")
    b.wait_for(
        "the list",
        lambda: (
            b.attr('tr[data-rollout="%s"]' % rollout_id, "data-status")
            == "CANCELLED"
        ),
    )


def test_rollout_cancel_from_the_page(heat_all, browser):
    b = browser
    project = "cancel-" + b.name
    heat = heat_all.client(project)
    ids = _apps(heat)
    rollout_id = _start(b, heat_all.url, project, "cancelled", 1, 5)
    b.wait_for("the canary done", lambda: _target(b, "app-0") == "SUCCEEDED")
    _action(b, "cancel")
    b.wait_for("CANCELLED", lambda: _status(b) == "CANCELLED", timeout=60)
    api = _api(heat_all, project, rollout_id)
    skipped = {
        t["stack_name"] for t in api["targets"] if t["status"] == "SKIPPED"
    }
    assert skipped and "app-5" in skipped
    for name in skipped:
        assert _target(b, name) == "SKIPPED"
    assert _versions(heat, ids)["app-5"] == OLD
    # A finished rollout cannot be paused: the page offers only rollback.
    assert not b.css("#ro-pause")[0].is_enabled()
    assert not b.css("#ro-cancel")[0].is_enabled()
    assert b.css("#ro-rollback")[0].is_enabled()
