"""The promotions pages in real browsers against the real promotions API
(``heat-lite-all``, noauth): a test stack promoted into a production one
from the page (created, then updated in place behind a gate), the
target's provenance, a promotion rolled back from the page after a
confirmation, and a promotion whose gate fails leaving the production
stack as it was.

Skipped only when the server's ``/v1/{project}/promotions`` answers 404
(a heat_lite without the promotions API); any other answer runs it.
"""

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers, polling
from tests.functional.test_dashboard_rollouts import APP

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def heat_all(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("dash-promotions")
    )


@pytest.fixture(scope="module")
def promotions_api(heat_all):
    answer = requests.get(heat_all.endpoint() + "/promotions", timeout=30)
    if answer.status_code == 404:
        pytest.skip("this heat_lite has no promotions API (404)")
    assert answer.status_code == 200, answer.text
    return heat_all


def _status(b):
    return b.attr("#promotion-status .badge", "data-status")


def _outputs(heat, name):
    stack = heat.stacks.get(name)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def _physical(heat, name):
    return {
        r.resource_name: r.physical_resource_id
        for r in heat.resources.list(heat.stacks.get(name).id)
    }


def _settled(heat, name):
    """The stack's status once no operation runs on it."""
    return polling.until(
        lambda: (
            None
            if (status := heat.stacks.get(name).stack_status).endswith(
                "IN_PROGRESS"
            )
            else status
        ),
        60,
        name + " settled",
    )


def _promote(b, url, project, params, gate=True):
    """Fill and send the form; return the promotion's id once its page
    shows it finished."""
    b.open(url, "/%s/promotions" % project)
    b.wait_for(
        "the list or its empty state",
        lambda: b.css("#promotion-list .empty, #promotion-list table"),
    )
    b.click("#promotion-new")
    fields = [
        ("#p-source", "app1-test"),
        ("#p-target", "app1-prod"),
        ("#p-params", params),
    ]
    if gate:
        fields += [
            ("#p-output", "healthy"),
            ("#p-equals", "yes"),
            ("#p-timeout", "3"),
        ]
    promotion_id = b.submit(fields, "#p-submit", "/%s/promotions/" % project)
    b.wait_for(
        "the promotion finished",
        lambda: _status(b) in ("COMPLETE", "FAILED", "ROLLED_BACK"),
        timeout=60,
    )
    return promotion_id


def test_promote_provenance_rollback_and_failed_gate(
    promotions_api, heat_all, browser
):
    b = browser
    project = "release-" + b.name
    heat = heat_all.client(project)
    helpers.wait_for_status(
        heat, helpers.create(heat, "app1-test", APP), "CREATE_COMPLETE"
    )
    b.open(heat_all.url, "/%s/stacks" % project)
    b.wait_for(
        "the promotions link",
        lambda: b.css("#nav-promotions:not([hidden])"),
    )
    b.click("#nav-promotions")
    b.wait_for(
        "no promotions yet",
        lambda: "No promotions" in (b.text("#promotion-list .empty") or ""),
    )

    # 1. Created by a promotion, behind a gate that passes.
    first = _promote(b, heat_all.url, project, "")
    assert _status(b) == "COMPLETE", b.text("#promotion-reason")
    assert "created by it" in b.text("#promotion-target")
    assert _outputs(heat, "app1-prod")["version"] == "v1"
    b.click("#promotion-target a")
    b.wait_for(
        "the target's provenance",
        lambda: "app1-test" in (b.text("#promoted-from") or ""),
    )

    # 2. Updated in place with an overlay; then undone from the page.
    second = _promote(b, heat_all.url, project, "version=v2")
    assert _status(b) == "COMPLETE", b.text("#promotion-reason")
    assert _outputs(heat, "app1-prod")["version"] == "v2"
    b.click("#pr-rollback")
    b.confirm()
    b.wait_for(
        "rolled back",
        lambda: _status(b) == "ROLLED_BACK",
        timeout=60,
    )
    _settled(heat, "app1-prod")
    assert _outputs(heat, "app1-prod")["version"] == "v1"
    assert not b.css("#pr-rollback")[0].is_enabled()
    before = _physical(heat, "app1-prod")

    # 3. A gate that fails: the production stack stays as it was.
    third = _promote(b, heat_all.url, project, "version=v3\nbroken_on=v3")
    assert _status(b) == "FAILED"
    assert b.text("#promotion-reason")
    assert not b.css("#pr-rollback")[0].is_enabled()
    assert _settled(heat, "app1-prod").endswith("COMPLETE")
    assert _outputs(heat, "app1-prod")["version"] == "v1"
    assert _physical(heat, "app1-prod") == before

    # The list, newest first, as the API has it.
    b.click("#main a")
    b.wait_for(
        "the three promotions",
        lambda: len(b.css("#promotion-list tr[data-promotion]")) == 3,
    )
    rows = [
        (r.get_attribute("data-promotion"), r.get_attribute("data-status"))
        for r in b.css("#promotion-list tr[data-promotion]")
    ]
    api = requests.get(
        heat_all.endpoint(project) + "/promotions", timeout=30
    ).json()["promotions"]
    assert rows == [(p["id"], p["status"]) for p in api]
    assert {r[0] for r in rows} == {first, second, third}

    # The first one, COMPLETE but overtaken by the second (rolled back,
    # it still changed the target): no roll back, and the page says why.
    b.open(heat_all.url, "/%s/promotions/%s" % (project, first))
    b.wait_css("#pr-overtaken")
    assert _status(b) == "COMPLETE"
    assert not b.css("#pr-rollback")[0].is_enabled()
    link = b.css("#pr-overtaken a")[0].get_attribute("href")
    assert link.endswith("/promotions/" + second), link
    assert {p["id"]: p["overtaken_by"] for p in api} == {
        first: second,
        second: None,
        third: None,
    }
