"""The dashboard with ``auth_strategy = keystone`` against a real Keystone
(tests.functional.keystone_env: SQLite, cheroot, a free port): the login
form, the session cookie's flags, CSRF refusals, logout revoking the
token, and users of two projects seeing only their own stacks — in a
real headless Chromium and with plain HTTP."""

import pytest
import requests
from heatclient import client as heat_client

from tests.functional import browser as browser_mod
from tests.functional import helpers, keystone_env

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


@pytest.fixture(scope="module")
def browser():
    browser_mod.available()
    b = browser_mod.Browser()
    yield b
    b.quit()


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
    a_id = helpers.create(alpha, "alpha-app", helpers.flat(2))
    b_id = helpers.create(beta, "beta-app", helpers.flat(1))
    helpers.wait_for_status(alpha, a_id, "CREATE_COMPLETE")
    helpers.wait_for_status(beta, b_id, "CREATE_COMPLETE")
    b = browser

    _browser_login(b, dep, "da", "alpha")
    b.wait_css('tr[data-stack="alpha-app"]')
    assert not b.css('tr[data-stack="beta-app"]')
    cookie = b.driver.get_cookie(COOKIE)
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert COOKIE not in b.driver.execute_script("return document.cookie")
    storage = b.driver.execute_script(
        "return [localStorage.length, sessionStorage.length]"
    )
    assert storage == [0, 0]
    b.click('tr[data-stack="alpha-app"] a')
    b.wait_for(
        "alpha's graph",
        lambda: b.css('#graph g.node[data-status="CREATE_COMPLETE"]'),
    )
    b.click("#logout")
    b.wait_css("#login-submit")
    assert b.driver.get_cookie(COOKIE) is None

    _browser_login(b, dep, "db", "beta")
    b.wait_css('tr[data-stack="beta-app"]')
    assert not b.css('tr[data-stack="alpha-app"]')
    # Beta's token cannot read alpha's project, whatever the page asks.
    b.open(dep.url, "/%s/stacks/alpha-app/%s" % (projects["alpha"], a_id))
    b.wait_for(
        "the API's refusal",
        lambda: "403" in (b.text("#message .error") or ""),
    )
    assert not b.css("#graph g.node")
    b.click("#logout")
    b.wait_css("#login-submit")
