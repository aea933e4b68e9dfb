"""Horizon's Orchestration panels (heat-dashboard 16.0.0, in Horizon
27.0.0 from PyPI: ``tools.horizon``) in front of heat_lite, driven in a
real headless Chromium and Firefox (each test once in each).

The test cloud's Keystone logs the user in and its catalog names a
heat_lite in keystone mode (API and two engines, PostgreSQL, RabbitMQ:
``tools.minicloud.heat_lite``) as the ``orchestration`` service, as an
operator would replace Heat under Horizon. Each screen is saved as a PNG
under the test's temporary directory.
"""

import functools
import http.server
import json
import os
import threading
import uuid

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from heatclient import client as heat_client

from harness import helpers
from tests.functional import browser as browser_mod
from tests.functional.test_api_legacy_client import LAUNCH
from tools.horizon import server
from tools.minicloud import catalog
from tools.minicloud import heat_lite as heat_lite_mod

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    # The first run installs Horizon (3 to 6 minutes), then each test
    # takes seconds.
    pytest.mark.timeout(1500),
]
PAGE_SIZE = 3
# Horizon's forms talk to three services per page under a loaded CI
# machine; its pages take seconds, not milliseconds.
WAIT = 90


@pytest.fixture(scope="module")
def heat_keystone(cloud, tmp_path_factory):
    """heat_lite in keystone mode on PostgreSQL, the catalog's
    orchestration service while the module runs (the one it replaced is
    put back afterwards)."""
    lay = cloud.layout
    before = lay.orchestration_url
    heat = heat_lite_mod.Heat(str(tmp_path_factory.mktemp("horizon-heat")))
    try:
        heat.start(lay)
        cloud.register_orchestration(heat.url)
        yield heat
    finally:
        if before:
            cloud.register_orchestration(before)
        else:
            catalog.unregister_orchestration(lay)
        heat.stop()


@pytest.fixture(scope="module")
def horizon(cloud, heat_keystone, tmp_path_factory):
    """A real Horizon logging in through the test cloud's Keystone."""
    browser_mod.available()
    found = server.Horizon(str(tmp_path_factory.mktemp("horizon")))
    try:
        found.start(cloud.layout.auth_url, page_size=PAGE_SIZE)
        yield found
    finally:
        found.stop()


@pytest.fixture(scope="module")
def demo_heat(cloud, heat_keystone):
    """python-heatclient as the cloud's ``demo``, to check what Horizon
    did (and to clean up after it)."""
    conn = cloud.connect("demo")
    heat = heat_client.Client(
        "1",
        session=conn.session,
        endpoint_override="%s/v1/%s"
        % (heat_keystone.url, conn.current_project_id),
    )
    yield heat
    helpers.delete_all(heat)
    conn.close()


class Page:
    """The browser on one Horizon, logged in as ``demo``."""

    def __init__(self, b, horizon, password, shots, image):
        self.b = b
        self.image = image
        self.base = horizon.url
        self.password = password
        self.shots = shots

    @property
    def url(self):
        return self.b.driver.current_url

    def go(self, path):
        self.b.driver.get(self.base + path)

    def shot(self, name):
        os.makedirs(self.shots, exist_ok=True)
        self.b.driver.save_screenshot(
            os.path.join(self.shots, "%s.png" % name)
        )

    def login(self):
        self.go("/auth/login/")
        self.b.set_value("#id_username", "demo")
        self.b.set_value("#id_password", self.password)
        self.js_click("#loginBtn")
        self.b.wait_for(
            "logged in", lambda: "/auth/login" not in self.url, WAIT
        )

    def js_click(self, selector, submit=False, navigates=False):
        """Click with the page's own script (Horizon's themed checkboxes
        and off-screen buttons are not clickable for WebDriver); with
        ``submit``, the submit button of the form that holds
        ``selector`` (Next, Launch, Update...).

        With ``navigates``, return once the page the click sends its
        form to has loaded: Firefox returns from the click before the
        form is even sent (Chromium, usually after), so what the test
        asks heat_lite next could come before Horizon's request."""
        self.b.wait_css(selector, WAIT)
        self.b.driver.execute_script(
            "var e = document.querySelector(arguments[0]);"
            "if (arguments[1]) e = e.form.querySelector('[type=submit]');"
            "document.documentElement.dataset.heatLiteOld = '1';"
            "e.scrollIntoView(); e.click();",
            selector,
            submit,
        )
        if navigates:
            self.b.wait_for(
                "the page after the click on " + selector, self.left, WAIT
            )

    def left(self):
        """Whether a new page has loaded since the last ``js_click``
        (the mark is in the DOM: Firefox runs each script of the test in
        a sandbox of its own, which ``window`` properties do not
        outlive)."""
        return self.b.driver.execute_script(
            "return !document.documentElement.dataset.heatLiteOld"
            " && document.readyState === 'complete';"
        )

    def parameters_sent(self, shot, word):
        """Fill LAUNCH's parameter form (``word``, the hidden ``secret``,
        the user's password), send it and wait for the stacks list."""
        self.b.set_value("#id___param_word", word)
        self.b.set_value("#id___param_secret", "hush")
        self.b.set_value("#id_password", self.password)
        self.shot(shot)
        self.js_click("#id___param_word", submit=True)
        self.b.wait_for(
            "the stacks list",
            lambda: self.url.rstrip("/").endswith("/project/stacks"),
            WAIT,
        )

    def template_source(self, template):
        """Fill a Select Template form with ``template`` typed in."""
        self.b.wait_css("#id_template_source", WAIT)
        self.b.driver.execute_script(
            "var s = document.getElementById('id_template_source');"
            "s.value = 'raw';"
            "s.dispatchEvent(new Event('change', {bubbles: true}));"
        )
        self.b.set_value("#id_template_data", yaml.safe_dump(template))

    def wait_text(self, selector, text):
        return self.b.wait_for(
            "%r in %s" % (text, selector),
            lambda: text in (self.b.text(selector) or ""),
            WAIT,
        )


@pytest.fixture(params=browser_mod.NAMES)
def page(request, horizon, cloud, tmp_path):
    """Each test once in each browser (tests/functional/browser.py)."""
    browser_mod.available(request.param)
    b = browser_mod.Browser(request.param)
    # A first login or a launch waits on Keystone and heat_lite.
    b.driver.set_page_load_timeout(WAIT)
    try:
        p = Page(
            b,
            horizon,
            cloud.layout.password,
            str(tmp_path / "shots"),
            cloud.image,
        )
        p.login()
        yield p
        p.shot("last")  # where a failing test stopped
    finally:
        b.quit()


def _launch(page, name, word):
    """Launch Stack: template typed in, validated, then the parameter
    form; returns when the stacks list shows the new stack."""
    page.go("/project/stacks/select_template")
    page.template_source(LAUNCH)
    page.shot("launch-1-template")
    page.js_click("#id_template_data", submit=True)
    page.b.wait_css("#id___param_word", WAIT)
    page.shot("launch-2-parameters")
    # NoEcho is a password field; AllowedValues and the glance.image
    # custom constraint are drop-downs, the latter filled from Glance.
    assert page.b.attr("#id___param_secret", "type") == "password"
    images = page.b.wait_for(
        "Glance's images in the drop-down",
        lambda: [o.text for o in page.b.css("#id___param_image option")],
        WAIT,
    )
    assert page.image in " ".join(images)
    sizes = [o.text for o in page.b.css("#id___param_size option")]
    assert sizes == ["small", "large"]
    page.b.set_value("#id_stack_name", name)
    page.parameters_sent("launch-3-filled", word)


def test_stacks_list_and_launch_with_required_parameter(page, demo_heat):
    page.go("/project/stacks/")
    page.b.wait_css("table#stacks", WAIT)
    page.shot("stacks-empty")
    name = "hz" + uuid.uuid4().hex[:6]
    _launch(page, name, "hello")
    page.shot("stacks-launched")
    stack = helpers.wait_for_status(demo_heat, name, "CREATE_COMPLETE")
    assert stack.parameters["word"] == "hello"
    assert stack.parameters["size"] == "small"
    assert stack.parameters["secret"] == "******"
    assert stack.parameters["image"] != "any"  # one of the drop-down's
    page.go("/project/stacks/")
    page.wait_text("table#stacks", name)
    page.wait_text("table#stacks", "Create Complete")
    page.shot("stacks-complete")


TABS = (
    # (tab slug, what it must show)
    ("overview", "A launch form"),
    ("resources", "OS::Heat::TestResource"),
    ("events", "Stack CREATE completed successfully"),
    ("stack_template", "get_attr"),
)


def test_stack_detail_tabs_resource_and_delete(page, demo_heat):
    name = "hzd" + uuid.uuid4().hex[:6]
    stack_id = helpers.create(
        demo_heat,
        name,
        LAUNCH,
        parameters={"word": "shown", "secret": "s", "image": "mc-image"},
    )
    helpers.wait_for_status(demo_heat, stack_id, "CREATE_COMPLETE")
    detail = "/project/stacks/stack/%s/" % stack_id
    # Topology: a node per resource and the edge b -> a (required_by).
    page.go(detail + "?tab=stack_details__topology")
    page.b.wait_for(
        "the topology's nodes and edge",
        lambda: (
            len(page.b.css("#heat_resource_topology svg g.node")) >= 2
            and page.b.css("#heat_resource_topology svg line.link")
        ),
        WAIT,
    )
    page.shot("detail-topology")
    for slug, shown in TABS:
        page.go(detail + "?tab=stack_details__" + slug)
        page.wait_text(".tab-content .tab-pane.active", shown)
        page.shot("detail-" + slug)
    # Overview: the output's description and value, the parameters.
    page.go(detail + "?tab=stack_details__overview")
    page.wait_text(".tab-content .tab-pane.active", "a's output")
    overview = page.b.text(".tab-content .tab-pane.active")
    assert "shown" in overview and "Create_Complete" in overview
    # A resource's own page, with its metadata.
    page.go(detail + "b/")
    page.wait_text("body", "from horizon")
    page.shot("resource-b")
    # Delete through the list's batch action and its confirmation.
    page.go("/project/stacks/")
    page.js_click(
        "tr[data-object-id='%s'] input.table-row-multi-select" % stack_id
    )
    page.js_click("#stacks__action_delete")
    page.b.wait_css(".modal-footer .btn-danger", WAIT)
    page.shot("delete-confirm")
    page.js_click(".modal-footer .btn-danger", navigates=True)
    helpers.wait_for_status(demo_heat, stack_id, "DELETE_COMPLETE")
    page.go("/project/stacks/")
    page.b.wait_css("table#stacks", WAIT)
    page.b.wait_for(
        "the stack gone from the list",
        lambda: name not in page.b.text("table#stacks"),
        WAIT,
    )
    page.shot("stacks-after-delete")


def _create(heat, prefix, word="word"):
    """A stack of LAUNCH made through the API; its (name, id)."""
    name = prefix + uuid.uuid4().hex[:6]
    stack_id = helpers.create(
        heat,
        name,
        LAUNCH,
        parameters={"word": word, "secret": "s", "image": "mc-image"},
    )
    return name, stack_id


def _confirm_if_asked(page):
    """Once the action just clicked has either asked for confirmation
    or sent its form, press the dialog's button if it asked; return once
    the page the form went to has loaded."""
    confirm = ".modal-footer .btn-danger, .modal-footer .btn-primary"
    page.b.wait_for(
        "a confirmation or the page after the action",
        lambda: page.b.css(confirm) or page.left(),
        WAIT,
    )
    if page.b.css(confirm):
        page.js_click(confirm, navigates=True)


def test_preview_stack(page):
    # heat-dashboard's preview form has no parameter fields (its form
    # skips CreateStackForm's): previewed templates need no values.
    template = dict(LAUNCH, parameter_groups=[])
    template["parameters"] = {
        "word": {"type": "string", "default": "peek"},
        "secret": {"type": "string", "default": "s", "hidden": True},
        "size": LAUNCH["parameters"]["size"],
        "image": {"type": "string", "default": "mc-image"},
    }
    page.go("/project/stacks/preview_template")
    page.template_source(template)
    page.shot("preview-1-template")
    page.js_click("#id_template_data", submit=True)
    page.b.set_value("#id_stack_name", "previewed")
    page.shot("preview-2-stack")
    page.js_click("#id_stack_name", submit=True)
    page.wait_text("body", "OS::Heat::TestResource")
    page.wait_text("body", "previewed")
    page.shot("preview-3-details")


def test_change_stack_template(page, demo_heat):
    name, stack_id = _create(demo_heat, "hzc", word="before")
    helpers.wait_for_status(demo_heat, stack_id, "CREATE_COMPLETE")
    changed = dict(LAUNCH, description="Changed from Horizon")
    page.go("/project/stacks/%s/change_template" % stack_id)
    page.template_source(changed)
    page.shot("change-1-template")
    page.js_click("#id_template_data", submit=True)
    page.b.wait_css("#id___param_word", WAIT)
    page.parameters_sent("change-2-parameters", "after")
    stack = helpers.wait_for_status(demo_heat, stack_id, "UPDATE_COMPLETE")
    assert stack.description == "Changed from Horizon"
    assert stack.parameters["word"] == "after"
    page.go("/project/stacks/")
    page.wait_text("table#stacks", "Update Complete")
    page.shot("change-3-list")


def test_batch_check_suspend_resume(page, demo_heat):
    made = [_create(demo_heat, "hzb") for _ in range(2)]
    for _, stack_id in made:
        helpers.wait_for_status(demo_heat, stack_id, "CREATE_COMPLETE")
    for action, state in (
        ("check", "CHECK_COMPLETE"),
        ("suspend", "SUSPEND_COMPLETE"),
        ("resume", "RESUME_COMPLETE"),
    ):
        page.go("/project/stacks/?stacks__filter_stacks__q_field=name")
        page.b.wait_css("table#stacks", WAIT)
        for _, stack_id in made:
            page.js_click(
                "tr[data-object-id='%s'] input.table-row-multi-select"
                % stack_id
            )
        page.js_click("#stacks__action_%s" % action)
        _confirm_if_asked(page)
        for _, stack_id in made:
            helpers.wait_for_status(demo_heat, stack_id, state)
        page.go("/project/stacks/")
        page.wait_text("table#stacks", state.replace("_", " ").title())
        page.shot("batch-%s" % action)


def test_stacks_list_pages(page, demo_heat):
    made = [_create(demo_heat, "hzp") for _ in range(PAGE_SIZE + 1)]
    for _, stack_id in made:
        helpers.wait_for_status(demo_heat, stack_id, "CREATE_COMPLETE")
    listed = {s.id for s in demo_heat.stacks.list()}
    seen = []
    page.go("/project/stacks/")
    for number in range(len(listed)):
        rows = page.b.wait_for(
            "the rows of page %d" % number,
            lambda: page.b.css("table#stacks tbody tr[data-object-id]"),
            WAIT,
        )
        assert len(rows) <= PAGE_SIZE
        seen += [r.get_attribute("data-object-id") for r in rows]
        page.shot("list-page-%d" % number)
        nxt = page.b.driver.find_elements(
            "xpath", "//table[@id='stacks']//a[contains(., 'Next')]"
        )
        if not nxt:
            break
        # The property: the absolute URL (Firefox gives the attribute as
        # written, here a relative one).
        page.go(nxt[0].get_property("href").split(page.base, 1)[1])
    assert len(seen) == len(set(seen))
    assert set(seen) == listed


def test_resource_types_and_template_versions(page):
    page.go("/project/resource_types/")
    page.wait_text("body", "OS::Heat::TestResource")
    page.shot("resource-types")
    page.go("/project/resource_types/OS::Heat::TestResource/")
    page.wait_text("body", "update_allowed")
    page.shot("resource-type-detail")
    page.go("/project/template_versions/")
    page.wait_text("body", "heat_template_version.2018-08-31")
    page.shot("template-versions")
    page.go("/project/template_versions/heat_template_version.2018-08-31/")
    page.wait_text("body", "get_param")
    page.shot("template-version-functions")


class _Files:
    """Files served over HTTP on loopback, as a template repository would
    serve them (Horizon fetches a template URL and its ``get_file`` and
    template-resource URLs itself, then sends them in ``files``)."""

    def __init__(self, directory):
        handler = functools.partial(
            http.server.SimpleHTTPRequestHandler, directory=str(directory)
        )
        handler.log_message = lambda *a: None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, daemon=True
        )
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


def _public_key():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return (
        key.public_key()
        .public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
        .decode()
    )


def _choose(page, field, text):
    """Pick the option of the ``<select>`` ``field`` whose label holds
    ``text`` (filled by Horizon from the cloud); its options' labels."""
    selector = "#id___param_" + field
    labels = page.b.wait_for(
        "the cloud's %s choices" % field,
        lambda: (
            [
                o.text
                for o in page.b.css(selector + " option")
                if text in o.text
            ]
            and [o.text for o in page.b.css(selector + " option")]
        ),
        WAIT,
    )
    page.b.driver.execute_script(
        "var s = document.querySelector(arguments[0]);"
        "for (var o of s.options) if (o.text.indexOf(arguments[1]) >= 0)"
        " s.value = o.value;"
        "s.dispatchEvent(new Event('change', {bubbles: true}));",
        selector,
        text,
    )
    return labels


def test_launch_from_a_url_with_the_clouds_drop_downs(
    page, demo_heat, cloud, tmp_path
):
    """Launch Stack with the template given by URL: its ``get_file`` and
    its template resource are URLs too; the form's flavor, network,
    key pair and image drop-downs come from Nova, Neutron and Glance.
    The server and network the stack makes then show in Horizon's own
    Instances and Networks panels.

    The file ``get_file`` reads is a template: heat-dashboard 16 sends a
    fetched file that is not a template as bytes and fails on them itself
    (``TypeError: Object of type bytes is not JSON serializable``, a 500
    before any call to the orchestration service, so with Heat as well).
    """
    tag = uuid.uuid4().hex[:6]
    conn = cloud.connect("demo")
    key = conn.compute.create_keypair(
        name="hz-key-" + tag, public_key=_public_key()
    )
    served = tmp_path / "served"
    served.mkdir()
    files = _Files(served)
    try:
        inner = helpers.template(
            {
                "r": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_param": "word"}},
                }
            },
            parameters={"word": {"type": "string"}},
            outputs={"said": {"value": {"get_attr": ["r", "output"]}}},
        )
        (served / "inner.yaml").write_text(yaml.safe_dump(inner))
        param = {"type": "string"}
        template = helpers.template(
            {
                "greeting": {
                    "type": "OS::Heat::TestResource",
                    "properties": {
                        "value": {"get_file": files.url + "inner.yaml"}
                    },
                },
                "inner": {
                    "type": files.url + "inner.yaml",
                    "properties": {"word": "nested hi"},
                },
                "net": {
                    "type": "OS::Neutron::Net",
                    "properties": {"name": "hz-net-" + tag},
                },
                "server": {
                    "type": "OS::Nova::Server",
                    "properties": {
                        "name": "hz-vm-" + tag,
                        "image": {"get_param": "image"},
                        "flavor": {"get_param": "flavor"},
                        "key_name": {"get_param": "key"},
                        "networks": [{"network": {"get_param": "network"}}],
                    },
                },
            },
            parameters={
                name: dict(
                    param, constraints=[{"custom_constraint": constraint}]
                )
                for name, constraint in (
                    ("flavor", "nova.flavor"),
                    ("network", "neutron.network"),
                    ("key", "nova.keypair"),
                    ("image", "glance.image"),
                )
            },
            outputs={
                "greeting": {"value": {"get_attr": ["greeting", "output"]}},
                "inner": {"value": {"get_attr": ["inner", "said"]}},
            },
        )
        (served / "launch.yaml").write_text(yaml.safe_dump(template))
        page.go("/project/stacks/select_template")
        page.b.wait_css("#id_template_source", WAIT)
        page.b.driver.execute_script(
            "var s = document.getElementById('id_template_source');"
            "s.value = 'url';"
            "s.dispatchEvent(new Event('change', {bubbles: true}));"
        )
        page.b.set_value("#id_template_url", files.url + "launch.yaml")
        page.shot("url-1-template")
        page.js_click("#id_template_url", submit=True)
        page.b.wait_css("#id___param_flavor", WAIT)
        flavors = _choose(page, "flavor", cloud.flavor)
        networks = _choose(page, "network", cloud.network)
        keys = _choose(page, "key", key.name)
        _choose(page, "image", cloud.image)
        page.shot("url-2-drop-downs")
        # Filled from the cloud, not typed in: more than the one chosen.
        assert len(flavors) >= 2, flavors
        assert any(cloud.network in n for n in networks), networks
        assert any(key.name in k for k in keys), keys
        name = "hzu" + tag
        page.b.set_value("#id_stack_name", name)
        page.b.set_value("#id_password", page.password)
        page.js_click("#id_stack_name", submit=True)
        page.b.wait_for(
            "the stacks list",
            lambda: page.url.rstrip("/").endswith("/project/stacks"),
            WAIT,
        )
        stack_id = demo_heat.stacks.get(name).id
        helpers.wait_for_status(demo_heat, stack_id, "CREATE_COMPLETE")
        stack = demo_heat.stacks.get(stack_id)
        outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
        assert outputs["inner"] == "nested hi"
        # What get_file read: the file's template, as Horizon sent it.
        assert json.loads(outputs["greeting"]) == inner
        # Horizon's own Nova and Neutron panels show what the stack made.
        page.go("/project/instances/")
        page.wait_text("body", "hz-vm-" + tag)
        page.shot("url-3-instances")
        page.go("/project/networks/")
        page.wait_text("body", "hz-net-" + tag)
        page.shot("url-4-networks")
    finally:
        files.close()
        conn.compute.delete_keypair(key)
        conn.close()


def test_topology_follows_a_stack_in_progress(page, demo_heat, heat_keystone):
    """The Topology tab of a stack in progress polls: a resource still
    being created is drawn grey and animated, and turns green on the
    open page (no reload) once the create ends. (The svg holds the two
    resources; the stack itself is drawn above it.)"""
    hold = "hzt" + uuid.uuid4().hex[:6]
    template = helpers.template(
        {
            "quick": {"type": "OS::Heat::TestResource"},
            "slow": {
                "type": "OS::Heat::TestResource",
                "properties": {"hold": hold},
                "depends_on": "quick",
            },
        }
    )

    def images():
        return page.b.driver.execute_script(
            "return Array.from(document.querySelectorAll("
            "'#heat_resource_topology svg image')).map(function (i) {"
            " return i.getAttribute('href') || i.getAttribute('xlink:href')"
            " || i.getAttributeNS('http://www.w3.org/1999/xlink', 'href')"
            " || ''; });"
        )

    with helpers.holding(heat_keystone.ledger, hold):
        stack_id = helpers.create(demo_heat, hold, template)
        page.go(
            "/project/stacks/stack/%s/?tab=stack_details__topology" % stack_id
        )
        page.b.wait_for(
            "a resource drawn in progress",
            lambda: any(src.endswith("-gray.gif") for src in images()),
            WAIT,
        )
        page.shot("topology-1-in-progress")
    helpers.wait_for_status(demo_heat, stack_id, "CREATE_COMPLETE")
    page.b.wait_for(
        "every node green, on the same page",
        lambda: (
            len(images()) == 2
            and all(src.endswith("-green.svg") for src in images())
        ),
        WAIT,
    )
    page.shot("topology-2-complete")
