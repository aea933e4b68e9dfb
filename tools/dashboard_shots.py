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

from tests.functional import browser as browser_mod
from tests.functional import deployment, helpers
from tests.functional.test_dashboard import APP

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
