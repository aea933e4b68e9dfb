"""Screenshots of the dashboard's main pages for doc/dashboard/, and the
page weight of the stack page: ``python -m tools.dashboard_shots``.

Starts a heat-lite-all (SQLite) and Debian's headless chromium, as the
browser tests do (tests.functional.browser), in a 1440x900 window; makes
a few stacks (one of them rolled back after a failed update), catches the
stack page while an update replaces a resource (its version history
below the graph), a 40-resource stack's graph fitted to the window, the
stack page in a phone's width, and a rollout mid-way.
"""

import json
import os
import sys
import tempfile
import time

import requests

from harness import deployment, helpers
from tests.functional import browser as browser_mod
from tests.functional.test_dashboard import APP, BROKEN, FAILABLE
from tests.functional.test_dashboard_layout import webshop
from tests.functional.test_dashboard_rollouts import APP as FLEET_APP

OUT = os.path.join(
    os.path.dirname(os.path.dirname(__file__)), "doc", "dashboard"
)
WINDOW = (1440, 900)


def _page_weight(b):
    """KB of bodies the stack page loaded (a first visit transfers them
    all; a later one revalidates the files: 304s of ~0.3 KB each)."""
    entries = b.driver.execute_script(
        "return performance.getEntriesByType('navigation')"
        ".concat(performance.getEntriesByType('resource'))"
        ".map(e => [e.name, e.transferSize, e.encodedBodySize])"
    )
    return sum(e[2] for e in entries) / 1024.0, entries


def _rollout_shot(dep, b):
    """The rollout page while its second batch runs, one stack of the
    first having failed its check."""
    heat = dep.client("fleet")
    ids = [
        helpers.create(
            heat,
            "app-%d" % i,
            FLEET_APP,
            parameters={"broken_on": "v2" if i == 2 else "none"},
        )
        for i in range(7)
    ]
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    rollout = requests.post(
        dep.endpoint("fleet") + "/rollouts",
        json={
            "name": "app-v2",
            "selector": {"stack_name": "app-*"},
            "update": {"parameters": {"version": "v2"}},
            "verify": {
                "timeout": 3,
                "checks": [
                    {"type": "output", "output": "healthy", "equals": "yes"}
                ],
            },
            "strategy": {"canary": 1, "batch_size": 3, "max_failures": 2},
        },
        timeout=30,
    ).json()["rollout"]
    b.open(dep.url, "/fleet/rollouts/" + rollout["id"])
    b.wait_css('.batch[data-batch="1"][data-state="done"]', timeout=60)
    b.wait_css('.batch[data-batch="2"][data-state="running"]', timeout=60)
    b.driver.save_screenshot(os.path.join(OUT, "rollout.png"))


def _stacks(heat):
    """A few stacks: three fine, one failed, one rolled back, and ``shop``
    (its id), whose update replaces ``app`` slowly."""
    for name in ("web", "db", "cache"):
        helpers.create(heat, name, helpers.chain(3), tags="prod")
    helpers.create(heat, "broken", BROKEN, disable_rollback=True)
    undone = helpers.create(heat, "payments", FAILABLE, disable_rollback=False)
    helpers.wait_for_status(heat, undone, "CREATE_COMPLETE")
    heat.stacks.update(undone, existing=True, parameters={"fail": "true"})
    helpers.wait_for_status(heat, undone, "ROLLBACK_COMPLETE")
    shop = helpers.create(heat, "shop", APP.replace("delete: 2", "delete: 8"))
    helpers.wait_for_status(heat, shop, "CREATE_COMPLETE")
    return shop


def _large_shot(dep, b):
    """A realistic stack's graph (40 resources, 8 layers) at 1440 px."""
    heat = dep.client("demo")
    template, files, environment = webshop()
    name = "webshop-production-eu-west"
    stack_id = helpers.create(
        heat, name, template, files=files, environment=environment
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=300)
    b.open(dep.url, "/demo/stacks/%s/%s" % (name, stack_id))
    b.wait_for(
        "the graph",
        lambda: (
            len(b.css('#graph g.node[data-status="CREATE_COMPLETE"]'))
            == len(template["resources"])
        ),
    )
    b.driver.execute_script(
        "document.getElementById('graph').scrollIntoView()"
    )
    time.sleep(0.5)
    b.driver.save_screenshot(os.path.join(OUT, "stack-large.png"))


def _update_shots(dep, b, heat, shop):
    """The stack page while an update replaces ``app``, at full width and
    at a phone's; returns the page's weight."""
    b.open(dep.url, "/demo/stacks/shop/" + shop)
    b.wait_css('#graph g.node[data-status="CREATE_COMPLETE"]')
    time.sleep(1)
    weight, entries = _page_weight(b)
    heat.stacks.update(shop, existing=True, parameters={"version": "v2"})
    b.wait_css('#graph g.version[data-role="replaced"]')
    b.click('#graph g.node[data-resource="app"] rect.box')
    b.wait_css('#resource table.versions tr[data-role="replaced"]')
    b.driver.execute_script(
        "document.getElementById('actions').scrollIntoView()"
    )
    time.sleep(0.5)
    b.driver.save_screenshot(os.path.join(OUT, "stack-update.png"))
    b.driver.set_window_size(420, 900)
    time.sleep(0.5)
    b.driver.execute_script(
        "document.getElementById('actions').scrollIntoView()"
    )
    b.driver.save_screenshot(os.path.join(OUT, "stack-narrow.png"))
    b.driver.set_window_size(*WINDOW)
    return weight, entries


def main():
    dep = deployment.Deployment("sqlite", tempfile.mkdtemp()).start()
    b = browser_mod.Browser()
    try:
        b.driver.set_window_size(*WINDOW)
        heat = dep.client("demo")
        shop = _stacks(heat)
        b.open(dep.url, "/demo/stacks")
        b.wait_css('tr[data-stack="shop"]')
        time.sleep(1)
        b.driver.save_screenshot(os.path.join(OUT, "stacks.png"))
        b.driver.get("about:blank")
        weight, entries = _update_shots(dep, b, heat, shop)
        _large_shot(dep, b)
        _rollout_shot(dep, b)
        json.dump(
            {"stack_page_kb": round(weight, 1), "requests": entries},
            sys.stdout,
            indent=1,
        )
    finally:
        b.quit()
        dep.stop()


if __name__ == "__main__":
    main()
