"""The stack page's layout in real browsers at a laptop's 1440x900
window: a realistic stack's dependency graph fits the window's width
and stays readable, a wide stack's is laid out in columns, and a
resource's version history is a readable table. What is checked is
what a reader sees: where boxes are, what text is in sight, what a
copy takes."""

import pytest
import requests

from harness import deployment as deployment_mod
from harness import helpers

pytestmark = pytest.mark.functional

WIDTH, HEIGHT = 1440, 900

# A web shop as a cloud would run it: network, security groups, six web
# servers behind a load balancer, a database, three nested application
# tier stacks and what waits on all of them. 40 resources in 8 layers,
# long names; the cloud types are test resources (resource_registry).
TIER = """heat_template_version: 2018-08-31
parameters:
  subnet: {type: string}
resources:
  application_server_port:
    type: OS::Neutron::Port
    properties: {value: {get_param: subnet}}
  application_server_instance:
    type: OS::Nova::Server
    depends_on: application_server_port
  application_data_volume_attachment:
    type: OS::Cinder::VolumeAttachment
    depends_on: application_server_instance
"""
WEB_SERVERS = 6


def _webshop_resources():
    res = {}

    def add(name, rtype, *deps, **props):
        res[name] = {"type": rtype}
        if deps:
            res[name]["depends_on"] = list(deps)
        if props:
            res[name]["properties"] = props

    subnet = "private_subnet_application_tier"
    router = "router_interface_private_subnet"
    pool = "load_balancer_pool_web_tier"
    add("private_network", "OS::Neutron::Net")
    add(subnet, "OS::Neutron::Subnet", "private_network")
    add("external_router", "OS::Neutron::Router")
    add(router, "OS::Neutron::RouterInterface", "external_router", subnet)
    for group in ("web_ingress_https", "app_internal", "database_postgresql"):
        add("security_group_" + group, "OS::Neutron::SecurityGroup")
    add("load_balancer_frontend", "OS::Octavia::LoadBalancer", subnet)
    add(
        "load_balancer_listener_https_443",
        "OS::Octavia::Listener",
        "load_balancer_frontend",
    )
    add(pool, "OS::Octavia::Pool", "load_balancer_listener_https_443")
    add(
        "load_balancer_health_monitor_http", "OS::Octavia::HealthMonitor", pool
    )
    for i in range(WEB_SERVERS):
        port, server = "web_server_port_%02d" % i, "web_server_%02d" % i
        add(
            port,
            "OS::Neutron::Port",
            subnet,
            "security_group_web_ingress_https",
        )
        add(server, "OS::Nova::Server", port, router)
        add(
            "lb_pool_member_web_server_%02d" % i,
            "OS::Octavia::PoolMember",
            pool,
            server,
        )
    add(
        "public_floating_ip_frontend",
        "OS::Neutron::FloatingIP",
        router,
        "load_balancer_frontend",
    )
    add(
        "dns_record_public_frontend_service_endpoint",
        "OS::Designate::RecordSet",
        "public_floating_ip_frontend",
    )
    for i in range(3):
        add(
            "application_tier_group_member_%d" % i,
            "app_tier.yaml",
            router,
            "security_group_app_internal",
            subnet={"get_resource": subnet},
        )
    add(
        "database_server_port",
        "OS::Neutron::Port",
        subnet,
        "security_group_database_postgresql",
    )
    add("database_server_primary", "OS::Nova::Server", "database_server_port")
    add("database_data_volume", "OS::Cinder::Volume")
    add(
        "database_data_volume_attachment",
        "OS::Cinder::VolumeAttachment",
        "database_server_primary",
        "database_data_volume",
    )
    add(
        "monitoring_alarm_high_latency_frontend",
        "OS::Aodh::Alarm",
        "load_balancer_health_monitor_http",
        "dns_record_public_frontend_service_endpoint",
    )
    waits_on = [
        n for n in res if n.startswith(("lb_pool_member", "application_tier"))
    ]
    add(
        "deployment_complete_signal",
        "OS::Heat::None",
        "monitoring_alarm_high_latency_frontend",
        "database_data_volume_attachment",
        *waits_on,
    )
    return res


def webshop():
    """(template, files, environment) of the web shop stack."""
    resources = _webshop_resources()
    cloud_types = {
        r["type"] for r in resources.values() if r["type"].startswith("OS::")
    }
    cloud_types |= {
        "OS::Nova::Server",
        "OS::Neutron::Port",
        "OS::Cinder::VolumeAttachment",
    }
    cloud_types.discard("OS::Heat::None")
    environment = {
        "resource_registry": {
            t: "OS::Heat::TestResource" for t in sorted(cloud_types)
        }
    }
    return helpers.template(resources), {"app_tier.yaml": TIER}, environment


@pytest.fixture(scope="module")
def heat_all(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("dash-layout")
    )


@pytest.fixture
def wide(browser):
    """The browser at 1440x900 for one test."""
    browser.driver.set_window_size(WIDTH, HEIGHT)
    try:
        # The window takes its size a moment later (a loaded machine).
        browser.wait_for(
            "a %d px wide window" % WIDTH,
            lambda: (
                browser.driver.execute_script("return innerWidth;") == WIDTH
            ),
        )
        yield browser
    finally:
        browser.driver.set_window_size(1280, 800)


# Where the graph's box, its nodes and their name texts are, and at what
# size its text is drawn.
_GRAPH = """
const root = document.documentElement;
const box = document.getElementById('graph');
const svg = box.querySelector('svg.graph');
const at = (el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
const px = (el) => parseFloat(getComputedStyle(el).fontSize) * scale;
return {
  page: {scroll: root.scrollWidth, client: root.clientWidth,
         height: innerHeight},
  box: Object.assign(at(box), {scroll: box.scrollWidth,
    client: box.clientWidth, scrollHeight: box.scrollHeight}),
  scale: scale,
  nodes: [...svg.querySelectorAll('g.node')].map((g) => {
    const name = g.querySelector('text.name');
    const rect = g.querySelector(':scope > rect.box');
    const nested = g.querySelector('text.nested');
    // Room for the name: the node less its margins and the "nested" mark.
    const room = +rect.getAttribute('width') - 20
      - (nested ? nested.getComputedTextLength() + 6 : 0);
    return Object.assign(at(rect), {
      resource: g.dataset.resource,
      title: g.querySelector('title').textContent,
      name: name.textContent, nameWidth: name.getComputedTextLength(),
      inner: room, namePx: px(name),
      physicalPx: px(g.querySelector('text.physical'))});
  }),
  edges: [...svg.querySelectorAll('path.edge')].map(
    (e) => [e.dataset.from, e.dataset.to]),
};
"""


def _overlap(a, b):
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


def _shown_as(name, shown):
    """``shown`` is ``name`` whole, or its start and end around an
    ellipsis."""
    if shown == name:
        return True
    head, sep, tail = shown.partition("…")
    return (
        bool(sep and head and tail)
        and name.startswith(head)
        and name.endswith(tail)
    )


def _graph(b, count):
    b.wait_for(
        "%d nodes, complete" % count,
        lambda: (
            len(b.css('#graph g.node[data-status="CREATE_COMPLETE"]')) == count
        ),
    )
    return b.driver.execute_script(_GRAPH)


def test_a_realistic_graph_fits_a_1440_window(heat_all, wide):
    """40 resources in 8 layers with long names: the graph's box is
    within the window and the page does not scroll sideways; nor does the
    box (every layer is in sight at once), its nodes do not overlap, its
    text is drawn at 9.6 px or more, and a name cut to fit keeps its
    start and end."""
    b = wide
    project = "shop-" + b.name
    heat = heat_all.client(project)
    template, files, environment = webshop()
    stack_id = helpers.create(
        heat,
        "webshop-production-eu-west",
        template,
        files=files,
        environment=environment,
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=300)
    b.open(
        heat_all.url,
        "/%s/stacks/webshop-production-eu-west/%s" % (project, stack_id),
    )
    seen = _graph(b, len(template["resources"]))
    page, box = seen["page"], seen["box"]
    assert page["scroll"] <= page["client"], page
    assert 0 <= box["left"] and box["right"] <= page["client"], (box, page)
    assert box["scroll"] <= box["client"], box
    nodes = seen["nodes"]
    for node in nodes:
        assert box["left"] <= node["left"] and node["right"] <= box["right"], (
            node
        )
        assert node["namePx"] >= 9.6 and node["physicalPx"] >= 8, node
        assert node["nameWidth"] <= node["inner"], node
        assert _shown_as(node["resource"], node["name"]), node
        assert node["title"].startswith(node["resource"] + ", "), node
    for i, a in enumerate(nodes):
        for other in nodes[i + 1 :]:
            assert not _overlap(a, other), (a, other)
    # Every dependency the API reports drawn, left to right: each resource
    # right of what it depends on.
    where = {n["resource"]: n for n in nodes}
    assert {tuple(e) for e in seen["edges"]} == {
        (r.resource_name, dependent)
        for r in heat.resources.list(stack_id)
        for dependent in r.required_by
    }
    for source, target in seen["edges"]:
        assert where[source]["right"] < where[target]["left"], (source, target)


# Points along each edge (its endpoints' boxes apart): none may be inside
# another node's box (an edge drawn under a node looks like that node's).
_EDGE_POINTS = """
const svg = document.querySelector('#graph svg.graph');
const toPage = (p) => { const pt = new DOMPoint(p.x, p.y)
  .matrixTransform(svg.getScreenCTM()); return [pt.x, pt.y]; };
return [...svg.querySelectorAll('path.edge')].map((e) => {
  const len = e.getTotalLength();
  const points = [];
  for (let i = 1; i < 40; i++) {
    points.push(toPage(e.getPointAtLength(len * i / 40)));
  }
  return {from: e.dataset.from, to: e.dataset.to, points};
});
"""


def _wide_template():
    """A network with 30 ports on it, and 10 volumes on their own (the
    network amid them: its edges start in the first of its layer's two
    columns)."""
    res = {"network": {"type": "OS::Heat::None"}}
    for i in range(30):
        res["port_%02d" % i] = {
            "type": "OS::Heat::None",
            "depends_on": "network",
        }
    for i in range(10):
        res["volume_%02d" % i] = {"type": "OS::Heat::None"}
    return helpers.template(res)


def test_a_wide_stack_is_laid_out_in_columns(heat_all, wide):
    """41 resources in two layers: each layer in side-by-side columns,
    the graph no taller than the window and no wider than its box, and
    no edge drawn under a node it does not join."""
    b = wide
    project = "wide-" + b.name
    heat = heat_all.client(project)
    stack_id = helpers.create(heat, "wide", _wide_template())
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    b.open(heat_all.url, "/%s/stacks/wide/%s" % (project, stack_id))
    seen = _graph(b, 41)
    box = seen["box"]
    assert box["scrollHeight"] <= seen["page"]["height"], box
    assert box["scroll"] <= box["client"], box
    assert seen["scale"] > 0.999
    assert len({round(n["left"]) for n in seen["nodes"]}) >= 4
    edges = b.driver.execute_script(_EDGE_POINTS)
    assert len(edges) == 30
    for edge in edges:
        for x, y in edge["points"]:
            under = [
                n["resource"]
                for n in seen["nodes"]
                if n["resource"] not in (edge["from"], edge["to"])
                and n["left"] + 1 < x < n["right"] - 1
                and n["top"] + 1 < y < n["bottom"] - 1
            ]
            assert not under, (edge["from"], edge["to"], (x, y), under)


# What a reader of the version history sees: per row, its cells' text,
# whether any cell's content overflows it, where the role and the status
# are and whether they are cut; the physical ID's title, whole text and
# its cut part; each time's text, value and lines.
_VERSIONS = """
const panel = document.getElementById('resource');
const table = panel.querySelector('table.versions');
const inside = (el, cell) => { const a = el.getBoundingClientRect(),
  c = cell.getBoundingClientRect();
  return a.width > 0 && a.height > 0 && a.left >= c.left - 0.5
    && a.right <= c.right + 0.5; };
const style = (el) => { const s = getComputedStyle(el);
  return [s.backgroundColor, s.color, s.borderTopStyle, s.borderTopColor,
          s.fontWeight].join(' '); };
return {
  panel: {scroll: panel.scrollWidth, client: panel.clientWidth,
          tableRight: table.getBoundingClientRect().right,
          right: panel.getBoundingClientRect().right},
  rows: [...table.querySelectorAll('tbody tr')].map((tr) => {
    const cells = [...tr.children];
    const role = tr.querySelector('.role');
    const badge = tr.querySelector('.badge');
    const id = tr.querySelector('code.ident');
    const head = id && id.querySelector('.head');
    return {
      version: tr.dataset.version, role: tr.dataset.role,
      texts: cells.map((c) => c.innerText.trim()),
      overflowing: cells.filter((c) => c.scrollWidth > c.clientWidth + 1)
        .map((c) => c.innerText),
      roleText: role && role.innerText.trim(),
      roleShown: !!role && inside(role, role.parentElement),
      roleStyle: role && style(role),
      status: badge && badge.dataset.status,
      badgeText: badge && badge.innerText,
      badgeShown: !!badge && inside(badge, badge.parentElement)
        && badge.scrollWidth <= badge.clientWidth,
      id: id && {title: id.title, text: id.textContent,
        cut: head.scrollWidth > head.clientWidth,
        ellipsis: getComputedStyle(head).textOverflow,
        shown: inside(id, id.parentElement)},
      times: [...tr.querySelectorAll('time')].map((t) => ({
        text: t.innerText, datetime: t.getAttribute('datetime'),
        title: t.title, lines: t.getClientRects().length})),
    };
  }),
};
"""

_SELECTION = "return window.getSelection().toString();"


def _api_versions(heat_all, project, stack, name):
    """{version: version} of the API's versions of resource ``name``."""

    def read():
        url = heat_all.endpoint(
            project
        ) + "/stacks/%s/resources/%s/versions" % (
            stack,
            name,
        )
        found = requests.get(url, timeout=10).json()["versions"]
        return {v["version"]: v for v in found}

    return read


def _consistent(b, read_api, roles):
    """What the page shows and the API's versions when they agree (the
    page reads them again only at its next poll) and have ``roles``."""

    def check():
        api = read_api()
        if {v["role"] for v in api.values()} != roles:
            return None
        seen = b.driver.execute_script(_VERSIONS)
        shown = {
            (int(r["version"]), r["role"], r["status"]) for r in seen["rows"]
        }
        want = {(n, v["role"], v["resource_status"]) for n, v in api.items()}
        return (seen, api) if shown == want else None

    return b.wait_for(
        "the versions %s as the API has them" % sorted(roles), check
    )


def _assert_readable(seen, api):
    """The version history ``seen`` shows each of ``api``'s versions
    readably."""
    panel = seen["panel"]
    assert panel["scroll"] <= panel["client"], panel
    assert panel["tableRight"] <= panel["right"], panel
    rows = seen["rows"]
    for row in rows:
        want = api[int(row["version"])]
        assert row["texts"][0] == "v%d" % want["version"], row
        assert not row["overflowing"], row
        assert row["roleText"] == want["role"] and row["roleShown"], row
        assert want["resource_status"] in row["badgeText"], row
        assert row["badgeShown"], row
        pid = want["physical_resource_id"]
        assert row["id"]["title"] == pid and row["id"]["text"] == pid, row
        assert row["id"]["shown"], row
        # Longer than its column: cut with an ellipsis, its end in sight.
        assert row["id"]["cut"] and row["id"]["ellipsis"] == "ellipsis", row
        assert pid[-10:] in row["texts"][3], row
        times = row["times"]
        assert [t["datetime"] for t in times] == [
            want["creation_time"],
            want["updated_time"],
        ], row
        for t in times:
            assert t["lines"] == 1, t
            assert t["text"] and t["text"] != t["datetime"], t
            assert t["datetime"] in t["title"], t
    # Each role looks different from the others, not only in words.
    styles = {}
    for row in rows:
        styles.setdefault(row["role"], row["roleStyle"])
    assert len(set(styles.values())) == len(styles), styles


# Slow enough deletes that the replaced version is seen beside the new.
VERSIONED = """heat_template_version: 2018-08-31
parameters:
  version: {type: string, default: v1}
resources:
  application_server:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: version}
      update_replace: true
      action_wait_secs: {delete: 8}
"""


def test_version_history_is_readable(heat_all, wide):
    """A resource replaced by an update: while the update runs, its
    current and replaced versions; then its current one and its history;
    each in an aligned row within the panel, role and status in words and
    looks, long physical IDs cut to their column but whole on hover and
    in a copy, times short and on one line."""
    b = wide
    project = "versions-" + b.name
    heat = heat_all.client(project)
    # A cloud's physical IDs are often long; the test resource's are the
    # stack's and the resource's names and a random part.
    stack = "shop-backend-production"
    stack_id = helpers.create(heat, stack, VERSIONED)
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    read = _api_versions(heat_all, project, stack_id, "application_server")
    b.open(heat_all.url, "/%s/stacks/%s/%s" % (project, stack, stack_id))
    b.click('#graph g.node[data-resource="application_server"] rect.box')
    b.wait_css('#resource table.versions tr[data-role="current"]')
    heat.stacks.update(stack_id, existing=True, parameters={"version": "v2"})
    _assert_readable(*_consistent(b, read, {"current", "replaced"}))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
    seen, api = _consistent(b, read, {"current", "history"})
    _assert_readable(seen, api)
    # A click on an ID selects all of it: a copy takes the whole value.
    old = next(n for n, v in api.items() if v["role"] == "history")
    b.click('#resource tr[data-version="%d"] code.ident' % old)
    assert (
        b.driver.execute_script(_SELECTION) == api[old]["physical_resource_id"]
    )
