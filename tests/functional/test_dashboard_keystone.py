"""The dashboard with ``auth_strategy = keystone`` against a real Keystone
(tests.functional.keystone_env: SQLite, cheroot, a free port): the login
form, the session cookie's flags, CSRF refusals, logout revoking the
token, and users of two projects seeing only their own stacks — in a
real headless Chromium and with plain HTTP."""

import pytest
import requests
from heatclient import client as heat_client

from harness import helpers
from tests.functional import browser as browser_mod
from tests.functional import keystone_env

pytestmark = pytest.mark.functional
COOKIE = "heat_lite_session"


@pytest.fixture(scope="module")
def cloud(tmp_path_factory):
    browser_mod.available()
    keystone_env.available()
    keystone = keystone_env.Keystone(tmp_path_factory.mktemp("dash-ks"))
    keystone.start()
    dep = None
    try:
        dep = keystone_env.deployment(
            keystone, "sqlite", tmp_path_factory.mktemp("dash-heat-ks")
        )
        projects = {
            "alpha": keystone.add_user("da", "alpha", "member"),
            "beta": keystone.add_user("db", "beta", "member"),
        }
        dep.start()
        yield keystone, dep, projects
    finally:
        if dep is not None:
            dep.stop()
        keystone.stop()


def _heat(keystone, dep, user, project, project_id):
    return heat_client.Client(
        "1",
        session=keystone.session(user, project),
        endpoint_override="%s/v1/%s" % (dep.url, project_id),
    )


def _login(dep, user, project, password=keystone_env.PASSWORD, **headers):
    return requests.post(
        dep.url + "/dashboard/api/login",
        json={
            "user": user,
            "password": password,
            "project": project,
            "domain": "Default",
        },
        headers=headers,
        timeout=30,
    )


def _browser_login(b, dep, user, project):
    b.open(dep.url)
    b.wait_css("#user").send_keys(user)
    b.css("#password")[0].send_keys(keystone_env.PASSWORD)
    b.css("#project")[0].send_keys(project)
    b.click("#login-submit")
    b.wait_for(
        "logged in",
        lambda: b.text("#whoami") == "%s @ %s" % (user, project),
    )


def test_cookie_csrf_and_logout_over_http(cloud):
    keystone, dep, projects = cloud
    wrong = _login(dep, "da", "alpha", password="not-it")
    assert wrong.status_code == 401
    assert "Set-Cookie" not in wrong.headers
    assert "not-it" not in wrong.text

    login = _login(dep, "da", "alpha")
    assert login.status_code == 200, login.text
    token = login.cookies[COOKIE]
    flags = [p.strip() for p in login.headers["Set-Cookie"].split(";")]
    assert "HttpOnly" in flags and "SameSite=Strict" in flags
    assert "Path=/" in flags
    body = login.json()
    assert token not in login.text
    assert body["project"]["id"] == projects["alpha"]
    csrf = body["csrf_token"]
    assert csrf and csrf != token
    cookies = {COOKIE: token}
    who = requests.get(
        dep.url + "/dashboard/api/session", cookies=cookies, timeout=30
    )
    assert who.json()["user"]["name"] == "da"
    assert who.json()["csrf_token"] == csrf
    assert token not in who.text

    stacks = "%s/v1/%s/stacks" % (dep.url, projects["alpha"])
    create = {"stack_name": "by-cookie", "template": helpers.flat(1)}
    # Reads need no CSRF token; changes do, and from this origin only.
    assert requests.get(stacks, cookies=cookies, timeout=30).status_code == 200
    for headers in (
        {},
        {"X-CSRF-Token": "forged"},
        {"X-CSRF-Token": csrf, "Origin": "http://evil.example"},
    ):
        refused = requests.post(
            stacks, json=create, cookies=cookies, headers=headers, timeout=30
        )
        assert refused.status_code == 403, headers
        assert "CSRF" in refused.json()["error"]["message"]
    assert requests.get(stacks, cookies=cookies, timeout=30).json() == {
        "stacks": []
    }
    made = requests.post(
        stacks,
        json=create,
        cookies=cookies,
        headers={"X-CSRF-Token": csrf, "Origin": dep.url},
        timeout=30,
    )
    assert made.status_code == 201, made.text
    # Logout needs the CSRF token too, clears the cookie, revokes the token.
    assert (
        requests.post(
            dep.url + "/dashboard/api/logout", cookies=cookies, timeout=30
        ).status_code
        == 403
    )
    out = requests.post(
        dep.url + "/dashboard/api/logout",
        cookies=cookies,
        headers={"X-CSRF-Token": csrf},
        timeout=30,
    )
    assert out.status_code == 204
    assert "Max-Age=0" in out.headers["Set-Cookie"]
    # Keystone no longer accepts the token (the API's keystonemiddleware
    # may still have it cached for [keystone_authtoken] token_cache_time,
    # as for any revoked token).
    assert (
        requests.get(
            dep.url + "/dashboard/api/session", cookies=cookies, timeout=30
        ).json()["logged_in"]
        is False
    )
    # Without any credentials the API answers 401 as before.
    assert requests.get(stacks, timeout=30).status_code == 401


def test_login_two_projects_isolated_and_logout(cloud, browser):
    keystone, dep, projects = cloud
    alpha = _heat(keystone, dep, "da", "alpha", projects["alpha"])
    beta = _heat(keystone, dep, "db", "beta", projects["beta"])
    b = browser
    mine, theirs = "alpha-app-" + b.name, "beta-app-" + b.name
    a_id = helpers.create(alpha, mine, helpers.flat(2))
    b_id = helpers.create(beta, theirs, helpers.flat(1))
    helpers.wait_for_status(alpha, a_id, "CREATE_COMPLETE")
    helpers.wait_for_status(beta, b_id, "CREATE_COMPLETE")

    _browser_login(b, dep, "da", "alpha")
    b.wait_css('tr[data-stack="%s"]' % mine)
    assert not b.css('tr[data-stack="%s"]' % theirs)
    cookie = b.driver.get_cookie(COOKIE)
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert COOKIE not in b.driver.execute_script("return document.cookie")
    storage = b.driver.execute_script(
        "return [localStorage.length, sessionStorage.length]"
    )
    assert storage == [0, 0]
    b.click('tr[data-stack="%s"] a' % mine)
    b.wait_for(
        "alpha's graph",
        lambda: b.css('#graph g.node[data-status="CREATE_COMPLETE"]'),
    )
    b.click("#logout")
    b.wait_css("#login-submit")
    assert b.driver.get_cookie(COOKIE) is None

    _browser_login(b, dep, "db", "beta")
    b.wait_css('tr[data-stack="%s"]' % theirs)
    assert not b.css('tr[data-stack="%s"]' % mine)
    # Beta's token cannot read alpha's project, whatever the page asks.
    b.open(dep.url, "/%s/stacks/%s/%s" % (projects["alpha"], mine, a_id))
    b.wait_for(
        "the API's refusal",
        lambda: "403" in (b.text("#message .error") or ""),
    )
    assert not b.css("#graph g.node")
    b.click("#logout")
    b.wait_css("#login-submit")


UPLOADED = """heat_template_version: 2018-08-31
parameters:
  size:
    type: number
    default: 1
  label:
    type: string
    default: first
resources:
  group:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: label}
outputs:
  label:
    value: {get_attr: [group, output]}
"""


def test_create_stack_from_the_page(cloud, browser, tmp_path):
    """Logged in, a user creates a stack from the page: a template file
    chosen in the form, its parameters read from the template (POST
    /validate) and changed, then created. Both POSTs go through the
    cookie with the CSRF token; the stack is in the user's project."""
    keystone, dep, projects = cloud
    b = browser
    name = "uploaded-" + b.name
    path = tmp_path / "app.yaml"
    path.write_text(UPLOADED)
    _browser_login(b, dep, "da", "alpha")
    b.click("#new-stack")
    b.wait_css("#c-name").send_keys(name)
    b.css("#c-file")[0].send_keys(str(path))
    b.wait_for(
        "the file read into the form",
        lambda: (
            "label:"
            in b.driver.execute_script(
                "return document.getElementById('c-template').value"
            )
        ),
    )
    b.click("#c-read-params")
    b.wait_for(
        "the template's parameters",
        lambda: (
            sorted(
                b.driver.execute_script(
                    "return document.getElementById('c-params').value"
                ).splitlines()
            )
            == ["label=first", "size=1"]
        ),
    )
    b.set_value("#c-params", "label=from-the-page\nsize=2")
    b.click("#c-submit")
    b.wait_for(
        "the graph going green",
        lambda: (
            b.attr('#graph g.node[data-resource="group"]', "data-status")
            == "CREATE_COMPLETE"
        ),
    )
    assert "/%s/stacks/%s/" % (projects["alpha"], name) in (
        b.driver.current_url
    )
    b.wait_for(
        "the stack complete with its output",
        lambda: "from-the-page" in (b.text("#outputs") or ""),
    )
    alpha = _heat(keystone, dep, "da", "alpha", projects["alpha"])
    stack = alpha.stacks.get(name)
    assert stack.parameters["label"] == "from-the-page"
    assert stack.parameters["size"] == "2"
    beta = _heat(keystone, dep, "db", "beta", projects["beta"])
    assert name not in [s.stack_name for s in beta.stacks.list()]
    b.click("#logout")
    b.wait_css("#login-submit")
