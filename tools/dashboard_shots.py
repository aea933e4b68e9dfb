"""Screenshots of the dashboard's main pages for doc/dashboard/, and the
page weight of the stack page: ``python -m tools.dashboard_shots``.

Starts a heat-lite-all (SQLite) and Debian's headless chromium, as the
browser tests do (tests.functional.browser), makes a few stacks, and
catches the stack page while an update replaces a resource.
"""

import json
import os
import sys
import tempfile
import time

import requests

from tests.functional import browser as browser_mod
from tests.functional import deployment, helpers
from tests.functional.test_dashboard import APP
from tests.functional.test_dashboard_rollouts import APP as FLEET_APP

OUT = os.path.join(
    os.path.dirname(os.path.dirname(__file__)), "doc", "dashboard"
)


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


def main():
    dep = deployment.Deployment("sqlite", tempfile.mkdtemp()).start()
    b = browser_mod.Browser()
    try:
        heat = dep.client("demo")
        for name in ("web", "db", "cache"):
            helpers.create(heat, name, helpers.chain(3), tags="prod")
        helpers.create(
            heat,
            "broken",
            helpers.template(
                {
                    "x": {
                        "type": "OS::Heat::TestResource",
                        "properties": {"fail": True},
                    }
                }
            ),
            disable_rollback=True,
        )
        shop = helpers.create(
            heat, "shop", APP.replace("delete: 2", "delete: 8")
        )
        helpers.wait_for_status(heat, shop, "CREATE_COMPLETE")
        b.open(dep.url, "/demo/stacks")
        b.wait_css('tr[data-stack="shop"]')
        time.sleep(1)
        b.driver.save_screenshot(os.path.join(OUT, "stacks.png"))
        b.driver.get("about:blank")
        b.open(dep.url, "/demo/stacks/shop/" + shop)
        b.wait_css('#graph g.node[data-status="CREATE_COMPLETE"]')
        time.sleep(1)
        weight, entries = _page_weight(b)
        heat.stacks.update(shop, existing=True, parameters={"version": "v2"})
        b.wait_css('#graph g.version[data-role="replaced"]')
        b.click('#graph g.node[data-resource="app"]')
        b.wait_css("#resource table.versions")
        b.driver.execute_script(
            "document.getElementById('actions').scrollIntoView()"
        )
        time.sleep(0.5)
        b.driver.save_screenshot(os.path.join(OUT, "stack-update.png"))
        b.driver.set_window_size(420, 900)
        time.sleep(0.5)
        b.driver.save_screenshot(os.path.join(OUT, "stack-narrow.png"))
        b.driver.set_window_size(1280, 800)
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
