"""The dashboard in a real headless Chromium against a real heat_lite
(noauth): ``heat-lite-all`` on SQLite, and the API with two engines over
RabbitMQ on PostgreSQL for the main scenario. The page uses the public
API only; what it shows is checked against what the API says."""

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers

pytestmark = pytest.mark.functional

APP = """heat_template_version: 2018-08-31
parameters:
  version:
    type: string
    default: v1
    description: the application's version
resources:
  base:
    type: OS::Heat::TestResource
    properties:
      value: base
  app:
    type: OS::Heat::TestResource
    depends_on: base
    properties:
      value: {get_param: version}
      update_replace: true
      action_wait_secs: {create: 0.5, update: 0, delete: 2}
  front:
    type: OS::Heat::None
    depends_on: app
outputs:
  version:
    value: {get_attr: [app, output]}
"""


# A stack whose create fails.
BROKEN = helpers.template(
    {"x": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}}
)


@pytest.fixture(scope="module")
def heat_all(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("dash-sqlite")
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def any_heat(request, heat_all, tmp_path_factory):
    if request.param == "sqlite":
        yield heat_all
        return
    yield from deployment_mod.running(
        request.param, tmp_path_factory.mktemp("dash-" + request.param)
    )


def _project(b, name):
    """A project of this test's own in this browser's run (each browser
    runs every test against the same heat_lite)."""
    return "%s-%s" % (name, b.name)


def _node(b, name):
    found = b.css('#graph g.node[data-resource="%s"]' % name)
    return found[0] if found else None


def _node_status(b, name):
    node = _node(b, name)
    return node.get_attribute("data-status") if node else None


def _all_nodes(b, status, names):
    return all(_node_status(b, n) == status for n in names)


def test_root_redirects_browsers_and_answers_clients(heat_all, browser):
    html = requests.get(
        heat_all.url + "/",
        headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"},
        allow_redirects=False,
        timeout=10,
    )
    assert html.status_code == 302
    assert html.headers["Location"].endswith("/dashboard/")
    for accept in ("application/json", "*/*", None):
        headers = {"Accept": accept} if accept else {}
        api = requests.get(heat_all.url + "/", headers=headers, timeout=10)
        assert api.status_code == 300
        assert api.json()["versions"][0]["id"] == "v1.0"
    browser.driver.get(heat_all.url + "/")
    browser.wait_for(
        "the dashboard", lambda: "/dashboard/" in browser.driver.current_url
    )
    browser.wait_css("#start-project")
    page = requests.get(heat_all.url + "/dashboard/", timeout=10)
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    again = requests.get(
        heat_all.url + "/dashboard/app.js",
        headers={"If-None-Match": '"%s"' % page.headers["ETag"].strip('"')},
        timeout=10,
    )
    assert again.status_code == 200  # another file, another ETag
    assert (
        requests.get(
            heat_all.url + "/dashboard/",
            headers={"If-None-Match": page.headers["ETag"]},
            timeout=10,
        ).status_code
        == 304
    )
    assert (
        requests.get(heat_all.url + "/dashboard/../setup.cfg", timeout=10)
    ).status_code == 404


def test_api_answers_304_while_nothing_changed(heat_all):
    heat = heat_all.client("etag")
    helpers.wait_for_status(
        heat,
        helpers.create(heat, "etag-1", helpers.flat(1)),
        "CREATE_COMPLETE",
    )
    url = heat_all.endpoint("etag") + "/stacks"
    first = requests.get(url, timeout=10)
    assert first.headers["ETag"]
    same = requests.get(
        url, headers={"If-None-Match": first.headers["ETag"]}, timeout=10
    )
    assert same.status_code == 304 and same.content == b""
    helpers.create(heat, "etag-2", helpers.flat(1))
    changed = requests.get(
        url, headers={"If-None-Match": first.headers["ETag"]}, timeout=10
    )
    assert changed.status_code == 200
    assert len(changed.json()["stacks"]) == 2


def test_change_marks_answer_304_until_the_stack_moves(heat_all):
    """What the pages poll: a stack's marks and its project's, each an
    empty 304 while nothing moved, and nothing of another project."""
    heat = heat_all.client("marks")
    stack_id = helpers.create(heat, "marked", helpers.chain(2))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    url = heat_all.endpoint("marks") + "/stacks/marked/" + stack_id
    project_url = heat_all.endpoint("marks") + "/changes"
    other_url = heat_all.endpoint("marks-other") + "/changes"
    first = requests.get(url + "/changes", timeout=10)
    marks = first.json()["changes"]
    assert marks["stack_status"] == "CREATE_COMPLETE"
    etag = {"If-None-Match": first.headers["ETag"]}
    same = requests.get(url + "/changes", headers=etag, timeout=10)
    assert same.status_code == 304 and same.content == b""
    listed = requests.get(project_url, timeout=10)
    other = requests.get(other_url, timeout=10).json()
    # Another project cannot read the stack's marks.
    assert (
        requests.get(
            heat_all.endpoint("marks-other")
            + "/stacks/marked/%s/changes" % stack_id,
            timeout=10,
        ).status_code
        == 404
    )
    heat.stacks.update(stack_id, template=helpers.chain(3))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    moved = requests.get(url + "/changes", headers=etag, timeout=10)
    assert moved.status_code == 200
    for part in ("stack", "resources", "events"):
        assert moved.json()["changes"][part] != marks[part], part
    again = requests.get(
        project_url,
        headers={"If-None-Match": listed.headers["ETag"]},
        timeout=10,
    )
    assert again.status_code == 200
    assert requests.get(other_url, timeout=10).json() == other


def test_stacks_list_filters_counts_and_pages(heat_all, browser):
    b = browser
    project = _project(b, "listing")
    heat = heat_all.client(project)
    ids = []
    for i in range(22):
        ids.append(
            helpers.create(
                heat,
                "s%02d" % i,
                helpers.flat(1),
                tags="even" if i % 2 == 0 else "odd",
            )
        )
    failing = helpers.create(heat, "broken", BROKEN, disable_rollback=True)
    for stack_id in ids:
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    helpers.wait_for_status(heat, failing, "CREATE_FAILED")
    b.open(heat_all.url, "/%s/stacks" % project)
    b.wait_for(
        "20 rows, newest first",
        lambda: (
            len(b.css("table.stacks tbody tr")) == 20
            and b.attr("table.stacks tbody tr", "data-stack") == "broken"
        ),
    )
    assert b.wait_for(
        "counts",
        lambda: (
            b.text('[data-count="ALL"] strong') == "23"
            and b.text('[data-count="FAILED"] strong') == "1"
            and b.text('[data-count="COMPLETE"] strong') == "22"
            and b.text('[data-count="IN_PROGRESS"] strong') == "0"
        ),
    )
    row = b.css('tr[data-stack="broken"]')[0]
    assert "CREATE_FAILED" in row.text
    b.click("#next-page")
    b.wait_for(
        "the second page",
        lambda: (
            [
                r.get_attribute("data-stack")
                for r in b.css("table.stacks tbody tr")
            ]
            == ["s02", "s01", "s00"]
        ),
    )
    # Filters: by tag, by status, by name.
    b.open(heat_all.url, "/%s/stacks" % project)
    b.wait_css("#f-tag").send_keys("odd")
    b.click("#f-apply")
    b.wait_for(
        "odd stacks only",
        lambda: (
            len(b.css("table.stacks tbody tr")) == 11
            and all(
                int(r.get_attribute("data-stack")[1:]) % 2
                for r in b.css("table.stacks tbody tr")
            )
        ),
    )
    b.open(heat_all.url, "/%s/stacks?status=FAILED" % project)
    b.wait_for(
        "failed stacks only",
        lambda: (
            [
                r.get_attribute("data-stack")
                for r in b.css("table.stacks tbody tr")
            ]
            == ["broken"]
        ),
    )
    b.open(heat_all.url, "/%s/stacks?name=nothing-of-that-name" % project)
    b.wait_for(
        "the empty state",
        lambda: "No stack matches" in (b.text("#stack-list .empty") or ""),
    )


def test_project_switch(heat_all, browser):
    b = browser
    one, two, empty = (_project(b, p) for p in ("proj-a", "proj-b", "none"))
    for project in (one, two):
        helpers.create(
            heat_all.client(project), "only-in-" + project, helpers.flat(1)
        )
    b.open(heat_all.url, "/%s/stacks" % one)
    b.wait_css('tr[data-stack="only-in-%s"]' % one)
    field = b.css("#project-input")[0]
    field.clear()
    field.send_keys(two)
    b.click("#project-switch")
    b.wait_css('tr[data-stack="only-in-%s"]' % two)
    assert not b.css('tr[data-stack="only-in-%s"]' % one)
    assert "#/%s/stacks" % two in b.driver.current_url
    b.open(heat_all.url, "/%s/stacks" % empty)
    b.wait_for(
        "the empty project",
        lambda: (
            "No stacks in project " + empty
            in (b.text("#stack-list .empty") or "")
        ),
    )


def test_create_update_replace_and_delete_from_the_page(any_heat, browser):
    """Create from the page, watch the graph go green, update a
    parameter (preview first) so that ``app`` is replaced, see the
    replaced version beside the current one and go away, events arriving
    live, the version history, then delete."""
    b = browser
    project = _project(b, "scenario")
    heat = any_heat.client(project)
    b.open(any_heat.url, "/%s/new" % project)
    b.wait_css("#c-name").send_keys("shop")
    b.set_value("#c-template", APP)
    b.click("#c-submit")
    b.wait_for(
        "the stack page",
        lambda: "/%s/stacks/shop/" % project in b.driver.current_url,
    )
    b.wait_for(
        "the graph going green",
        lambda: _all_nodes(b, "CREATE_COMPLETE", ("base", "app", "front")),
    )
    stack = heat.stacks.get("shop")
    # The resources may all be complete a moment before the stack is.
    b.wait_for(
        "the stack complete",
        lambda: b.text("#stack-status").endswith("CREATE_COMPLETE"),
    )
    resources = {r.resource_name: r for r in heat.resources.list(stack.id)}
    old_app = resources["app"].physical_resource_id
    assert (
        _node(b, "app")
        .find_element("css selector", "text.physical")
        .get_attribute("data-physical-id")
        == old_app
    )
    edges = {
        (e.get_attribute("data-from"), e.get_attribute("data-to"))
        for e in b.css("#graph path.edge")
    }
    assert edges == {("base", "app"), ("app", "front")}
    # Left to right: each node right of what it depends on.
    xs = [_node(b, n).rect["x"] for n in ("base", "app", "front")]
    assert xs == sorted(xs) and len(set(xs)) == 3
    b.wait_for(
        "the create's events",
        lambda: len(b.css("#events tbody tr")) >= 6,
    )
    events_before = len(b.css("#events tbody tr"))

    b.click("#act-update")
    field = b.wait_css('#update-form input[name="version"]')
    field.clear()
    field.send_keys("v2")
    b.click("#u-preview")
    b.wait_for(
        "the preview",
        lambda: b.text('#preview dd[data-change="replaced"]') == "app",
    )
    # The preview is a saved plan; "Apply" runs exactly that plan.
    plan_id = b.attr("#u-plan", "data-plan")
    b.click("#u-apply")
    b.confirm()
    beside = '#graph g.node[data-resource="app"] g.version[data-role="%s"]'
    replaced = b.wait_css(beside % "replaced")
    assert replaced.get_attribute("data-physical-id") == old_app
    b.wait_for(
        "newer events arriving at the top",
        lambda: (
            len(b.css("#events tbody tr")) > events_before
            and b.attr("#events tbody tr .badge", "data-status").split("_")[0]
            in ("UPDATE", "DELETE")
        ),
    )
    b.wait_for(
        "the update converging",
        lambda: b.text("#stack-status").endswith("UPDATE_COMPLETE"),
    )
    b.wait_for(
        "the replaced version gone",
        lambda: not b.css("#graph g.version"),
    )
    new_app = heat.resources.get(stack.id, "app").physical_resource_id
    assert new_app != old_app
    assert (
        _node(b, "app")
        .find_element("css selector", "text.physical")
        .get_attribute("data-physical-id")
        == new_app
    )
    assert "v2" in b.text("#outputs")
    plans = heat.http_client.get("/stacks/shop/%s/plans" % stack.id).json()[
        "plans"
    ]
    assert [(p["id"], p["status"]) for p in plans] == [(plan_id, "APPLIED")]
    # The resource's version history.
    b.click('#graph g.node[data-resource="app"] rect.box')
    b.wait_for(
        "the version history",
        lambda: len(b.css("#resource table.versions tbody tr")) >= 2,
    )
    roles = [
        r.get_attribute("data-role")
        for r in b.css("#resource table.versions tbody tr")
    ]
    assert roles[0] == "current" and "history" in roles

    b.click("#act-delete")
    b.confirm()
    b.wait_css("#stack-gone")
    helpers.wait_for_status(heat, stack.id, "DELETE_COMPLETE")


def test_concurrent_update_converges_and_cancel_rolls_back(heat_all, browser):
    """A second update while the first runs: the page follows the stack
    to the newest template. Then an update cancelled from the page rolls
    back."""
    b = browser
    project = _project(b, "conc")
    heat = heat_all.client(project)
    slow = APP.replace("delete: 2", "delete: 3")
    stack_id = helpers.create(heat, "conv", slow)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    b.open(heat_all.url, "/%s/stacks/conv/%s" % (project, stack_id))
    b.wait_for(
        "a green graph",
        lambda: _all_nodes(b, "CREATE_COMPLETE", ("base", "app", "front")),
    )
    heat.stacks.update(stack_id, existing=True, parameters={"version": "v2"})
    b.wait_for(
        "the first update in progress",
        lambda: b.text("#stack-status").endswith("UPDATE_IN_PROGRESS"),
    )
    heat.stacks.update(stack_id, existing=True, parameters={"version": "v3"})
    b.wait_for(
        "convergence on v3",
        lambda: (
            b.text("#stack-status").endswith("UPDATE_COMPLETE")
            and "v3" in b.text("#outputs")
        ),
        timeout=40,
    )
    b.wait_for(
        "no replaced version left", lambda: not b.css("#graph g.version")
    )
    heat.stacks.update(
        stack_id,
        existing=True,
        parameters={"version": "v4"},
    )
    b.wait_for(
        "the cancel button",
        lambda: b.css("#act-cancel") and b.css("#act-cancel")[0].is_enabled(),
    )
    b.click("#act-cancel")
    b.confirm()
    b.wait_for(
        "the rollback",
        lambda: b.text("#stack-status").endswith("ROLLBACK_COMPLETE"),
        timeout=40,
    )
    assert "v3" in b.text("#outputs")


# An update that sets ``fail`` fails, and is rolled back.
FAILABLE = """heat_template_version: 2018-08-31
parameters:
  fail: {type: boolean, default: false}
resources:
  app:
    type: OS::Heat::TestResource
    properties:
      fail: {get_param: fail}
"""

_BACKGROUND = "return getComputedStyle(arguments[0]).backgroundColor;"


def _badge(b, selector):
    """(status, css class, text, background) of the badge ``selector``."""
    found = b.wait_css(selector + " .badge")
    return (
        found.get_attribute("data-status"),
        found.get_attribute("class").split(),
        found.text,
        b.driver.execute_script(_BACKGROUND, found),
    )


def _listed(b):
    return [
        r.get_attribute("data-stack") for r in b.css("table.stacks tbody tr")
    ]


def test_a_rolled_back_update_shows_as_a_rollback(heat_all, browser):
    """An update that failed and was rolled back (ROLLBACK_COMPLETE) is
    shown as a rollback, never as a success: in the list (its badge, its
    own count; "complete" counts and lists successes only), in the
    stack's header (with a line saying the change was undone) and in its
    events: the rollback's colour and symbol, not the green and tick of a
    success."""
    b = browser
    project = _project(b, "undone")
    heat = heat_all.client(project)
    good = helpers.create(heat, "good", FAILABLE)
    undone = helpers.create(heat, "undone", FAILABLE, disable_rollback=False)
    for stack_id in (good, undone):
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(undone, existing=True, parameters={"fail": "true"})
    helpers.wait_for_status(heat, undone, "ROLLBACK_COMPLETE")
    b.open(heat_all.url, "/%s/stacks" % project)
    b.wait_for("both stacks", lambda: sorted(_listed(b)) == ["good", "undone"])
    status, classes, text, background = _badge(b, 'tr[data-stack="undone"]')
    assert status == "ROLLBACK_COMPLETE" and "s-rollback" in classes, classes
    assert "↶" in text and "✓" not in text, text
    ok = _badge(b, 'tr[data-stack="good"]')
    assert ok[0] == "CREATE_COMPLETE" and "s-complete" in ok[1]
    assert background != ok[3]
    b.wait_for(
        "the counts",
        lambda: (
            b.text('[data-count="COMPLETE"] strong') == "1"
            and b.text('[data-count="ROLLBACK_COMPLETE"] strong') == "1"
            and b.text('[data-count="ALL"] strong') == "2"
        ),
    )
    assert "rolled back" in b.text('[data-count="ROLLBACK_COMPLETE"]')
    b.click('[data-count="COMPLETE"]')
    b.wait_for("successes only", lambda: _listed(b) == ["good"])
    b.click('[data-count="ROLLBACK_COMPLETE"]')
    b.wait_for("the rolled back one", lambda: _listed(b) == ["undone"])

    b.open(heat_all.url, "/%s/stacks/undone/%s" % (project, undone))
    status, classes, text, _bg = _badge(b, "#stack-status")
    assert status == "ROLLBACK_COMPLETE" and "s-rollback" in classes, classes
    assert "↶" in text and "✓" not in text, text
    assert "rolled back" in b.wait_css("#stack-rollback").text
    b.wait_for(
        "the rollback's events",
        lambda: b.css('#events .badge[data-status="ROLLBACK_COMPLETE"]'),
    )
    events = [
        (e.get_attribute("data-status"), e.get_attribute("class").split())
        for e in b.css("#events .badge")
    ]
    rollbacks = [c for st, c in events if st.startswith("ROLLBACK_")]
    assert rollbacks and all("s-rollback" in c for c in rollbacks), events
    # Nodes in a rollback state, if any, are drawn as one too.
    for node in b.css("#graph g.node"):
        if node.get_attribute("data-status").startswith("ROLLBACK_"):
            assert "s-rollback" in node.get_attribute("class").split()
    # The stack that did not roll back says nothing of the kind.
    b.open(heat_all.url, "/%s/stacks/good/%s" % (project, good))
    b.wait_for(
        "its header",
        lambda: (
            b.attr("#stack-status .badge", "data-status") == "CREATE_COMPLETE"
        ),
    )
    assert not b.css("#stack-rollback")


def test_nested_stack_opens_on_click(heat_all, browser):
    b = browser
    project = _project(b, "nest")
    heat = heat_all.client(project)
    child = (
        "heat_template_version: 2018-08-31\n"
        "resources:\n  inner:\n    type: OS::Heat::None\n"
    )
    stack_id = helpers.create(
        heat,
        "outer",
        helpers.template({"kid": {"type": "child.yaml"}}),
        files={"child.yaml": child},
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    b.open(heat_all.url, "/%s/stacks/outer/%s" % (project, stack_id))
    b.click('#graph g.node[data-resource="kid"] rect.box')
    b.click("#open-nested")
    b.wait_for(
        "the nested stack's graph",
        lambda: _node_status(b, "inner") == "CREATE_COMPLETE",
    )
    assert "kid" in b.text("#stack-name")


_API_READS = (
    "return performance.getEntriesByType('resource')"
    ".map((e) => new URL(e.name).pathname)"
    ".filter((p) => p.includes('/v1/'));"
)


def test_an_idle_stack_page_polls_only_its_change_marks(heat_all, browser):
    """While nothing moves, each tick of the stack page is one request
    for its change marks; a change brings the parts that moved."""
    b = browser
    project = _project(b, "poll")
    heat = heat_all.client(project)
    stack_id = helpers.create(heat, "quiet", helpers.chain(2))
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    b.open(heat_all.url, "/%s/stacks/quiet/%s" % (project, stack_id))
    b.wait_for(
        "the graph", lambda: _all_nodes(b, "CREATE_COMPLETE", ("r0", "r1"))
    )
    # Count from here, in a buffer that cannot fill: opening a page that
    # differs only in its #fragment keeps the document (and its resource
    # timings) of the tests before, and a full buffer (250 entries by
    # default) records no more requests.
    b.driver.execute_script(
        "performance.setResourceTimingBufferSize(100000);"
        "performance.clearResourceTimings();"
    )
    first = len(b.driver.execute_script(_API_READS))
    changes = "/stacks/quiet/%s/changes" % stack_id
    later = b.wait_for(
        "three more polls",
        lambda: (lambda found: found if len(found) >= first + 3 else None)(
            b.driver.execute_script(_API_READS)
        ),
    )
    assert all(p.endswith(changes) for p in later[first:]), later[first:]
    heat.stacks.update(stack_id, template=helpers.chain(3))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    added = heat.resources.get(stack_id, "r2").resource_status
    b.wait_for("the new resource", lambda: _node_status(b, "r2") == added)
    b.wait_for(
        "the stack's status",
        lambda: (
            b.attr("#stack-status .badge", "data-status") == "UPDATE_COMPLETE"
        ),
    )
    # The events read since (only those after the newest one shown) are
    # the API's, newest first, none twice.
    events = requests.get(
        heat_all.endpoint(project)
        + "/stacks/quiet/%s/events?sort_dir=desc" % stack_id,
        timeout=10,
    ).json()["events"]
    expected = [e["id"] for e in events]
    b.wait_for(
        "every event in the table",
        lambda: (
            [
                row.get_attribute("data-event")
                for row in b.css("#events tr[data-event]")
            ]
            == expected
        ),
    )
