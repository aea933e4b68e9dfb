"""Real headless browsers driving the dashboard.

* Chromium: Debian's ``chromium`` and ``chromium-driver`` packages,
  through Selenium with the system chromedriver (Selenium never
  downloads a browser or a driver here).
* Firefox: Debian's ``firefox-esr``, driven over Firefox's own
  Marionette protocol by Mozilla's ``marionette-driver`` (PyPI). There
  is no geckodriver in Debian, and none on the registries this project
  may use that runs on Linux without downloading it at install time;
  Marionette is what geckodriver itself speaks to Firefox.

``.ci/run`` installs both browsers. A missing browser, driver or client
library makes the tests skip with the reason (fail under CI=true, like
any other backing service). The tests see one interface, ``Browser``,
whose ``driver`` answers the few WebDriver calls they make (``get``,
``current_url``, ``execute_script``, ``get_cookie``, ``find_elements``)
in either browser.
"""

import os
import shutil
import tempfile

from harness import backends, polling

CHROMIUM = os.environ.get("HEAT_LITE_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get(
    "HEAT_LITE_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"
)
FIREFOX = os.environ.get("HEAT_LITE_TEST_FIREFOX", "/usr/bin/firefox-esr")
# Which browsers the dashboard tests run in (each test once per browser).
NAMES = ("chromium", "firefox")
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--window-size=1280,800",
)
# Firefox preferences of a quiet test profile: no network of its own.
FIREFOX_PREFS = {
    "app.update.enabled": False,
    "browser.shell.checkDefaultBrowser": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "network.captive-portal-service.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "extensions.update.enabled": False,
}
# The dashboard polls this fast in the tests (?poll_ms=), 2 s by default.
POLL_MS = 300
WAIT = 30


def available(name="chromium"):
    """Skip (or fail under CI) without the browser, its driver or the
    client library."""
    if name == "firefox":
        try:
            import marionette_driver  # noqa: F401
        except ImportError:
            backends.unavailable(
                "Firefox (Marionette)",
                "marionette-driver is missing (pip install -e .[test])",
            )
        if not os.access(FIREFOX, os.X_OK):
            backends.unavailable(
                "Firefox",
                "%s is missing (apt-get install firefox-esr)" % FIREFOX,
            )
        return
    try:
        import selenium  # noqa: F401
    except ImportError:
        backends.unavailable("Selenium", "pip install -e .[test]")
    for path, package in (
        (CHROMIUM, "chromium"),
        (CHROMEDRIVER, "chromium-driver"),
    ):
        if not os.access(path, os.X_OK):
            backends.unavailable(
                "Chromium",
                "%s is missing (apt-get install %s)" % (path, package),
            )


def running(name, resolve=None):
    """Yield a started ``Browser`` of ``name`` and quit it afterwards:
    the body of a fixture (``yield from running(request.param)``).

    :param resolve: {host name: IP address} the browser uses instead of
        DNS (a page's name after DNS rebinding). Firefox takes one
        address for every name it resolves (IP literals are not names).
    """
    available(name)
    b = Browser(name, resolve)
    try:
        yield b
    finally:
        b.quit()


def _chromium(profile, resolve=None):
    from selenium import webdriver
    from selenium.common import exceptions
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + profile)
    if resolve:
        options.add_argument(
            "--host-resolver-rules="
            + ", ".join("MAP %s %s" % item for item in resolve.items())
        )
    driver = webdriver.Chrome(
        service=Service(executable_path=CHROMEDRIVER), options=options
    )
    driver.set_page_load_timeout(WAIT)
    return driver, exceptions.StaleElementReferenceException


class _Element:
    """A Marionette element with the Selenium names the tests use."""

    def __init__(self, element):
        self._el = element

    def __getattr__(self, name):
        return getattr(self._el, name)

    def find_element(self, by, value):
        return _Element(self._el.find_element(by, value))

    def find_elements(self, by, value):
        return [_Element(e) for e in self._el.find_elements(by, value)]

    @property
    def rect(self):
        return self._el.rect


class _Firefox:
    """Firefox over Marionette, answering as a Selenium driver would."""

    def __init__(self, profile, resolve=None):
        from marionette_driver import marionette

        self._workspace = profile
        prefs = dict(FIREFOX_PREFS)
        if resolve:
            (address,) = set(resolve.values())  # one for all, see running
            prefs["network.dns.forceResolve"] = address
        # port 0: Marionette picks a free one (parallel test runs).
        self._m = marionette.Marionette(
            bin=FIREFOX,
            port=0,
            headless=True,
            workspace=profile,
            prefs=prefs,
            gecko_log=os.path.join(profile, "gecko.log"),
            startup_timeout=WAIT * 2,
        )
        self._m.start_session()
        self._m.set_window_rect(width=1280, height=800)
        self._m.timeout.page_load = WAIT

    def get(self, url):
        self._m.navigate(url)

    @property
    def current_url(self):
        return self._m.get_url()

    def execute_script(self, script, *args):
        unwrapped = [a._el if isinstance(a, _Element) else a for a in args]
        return self._m.execute_script(script, script_args=unwrapped)

    def get_cookie(self, name):
        for cookie in self._m.get_cookies():
            if cookie["name"] == name:
                return cookie
        return None

    def find_elements(self, by, value):
        return [_Element(e) for e in self._m.find_elements(by, value)]

    def set_window_size(self, width, height):
        self._m.set_window_rect(width=width, height=height)

    def set_page_load_timeout(self, seconds):
        self._m.timeout.page_load = seconds

    def get_log(self, kind):
        return []

    def save_screenshot(self, path):
        import base64

        with open(path, "wb") as f:
            f.write(base64.b64decode(self._m.screenshot()))

    def quit(self):
        import gc

        from mozprofile import Profile

        self._m.cleanup()
        # mozprofile made its profiles under our directory (removed by
        # Browser.quit); without this, each would try again to remove
        # itself as Python exits, and print a traceback about it.
        for obj in gc.get_objects():
            if isinstance(obj, Profile) and obj.profile.startswith(
                self._workspace
            ):
                obj.restore = False


class Browser:
    """One browser with a fresh profile; ``page`` helpers with deadlines."""

    def __init__(self, name="chromium", resolve=None):
        """:param resolve: see ``running``."""
        self.name = name
        self.profile = tempfile.mkdtemp(prefix="heat-lite-%s-" % name)
        if name == "firefox":
            from marionette_driver import errors

            self.driver = _Firefox(self.profile, resolve)
            self._stale = errors.StaleElementException
        else:
            self.driver, self._stale = _chromium(self.profile, resolve)

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def open(self, base_url, fragment=""):
        """Load the dashboard afresh at ``fragment``.

        The blank page first: a URL that differs from the current one
        only after ``#`` is a same-document navigation, which keeps the
        old page and its DOM (a test would type into the old login form
        and the page's hashchange would redraw it under the test).
        """
        self.driver.get("about:blank")
        self.driver.get(
            "%s/dashboard/?poll_ms=%d#%s" % (base_url, POLL_MS, fragment)
        )

    def css(self, selector):
        return self.driver.find_elements("css selector", selector)

    def wait_for(self, what, check, timeout=WAIT):
        """Poll ``check()`` until it returns something true; return it."""
        seen = {}

        def checked():
            try:
                seen["last"] = value = check()
            except Exception as exc:  # noqa: BLE001 - stale DOM, retry
                seen["last"] = exc
                return None
            return value

        return polling.until(
            checked,
            timeout,
            lambda: (
                "%s: %s (last: %r)\nbrowser log: %s"
                % (self.name, what, seen.get("last"), self.console())
            ),
        )

    def wait_css(self, selector, timeout=WAIT):
        return self.wait_for(selector, lambda: self.css(selector), timeout)[0]

    def click(self, selector, timeout=WAIT):
        """Click the element ``selector`` finds, again if the page
        redrew it meanwhile (it polls the API and redraws)."""

        def attempt():
            found = self.css(selector)
            if not found:
                return False
            try:
                found[0].click()
            except self._stale:
                return False
            return True

        self.wait_for("a click on " + selector, attempt, timeout)

    def _first(self, selector, read):
        """``read(element)`` of the first match (None without one),
        again if the page redrew the element in between."""
        for _attempt in range(5):
            found = self.css(selector)
            if not found:
                return None
            try:
                return read(found[0])
            except self._stale:
                continue
        return None

    def attr(self, selector, name):
        return self._first(selector, lambda e: e.get_attribute(name))

    def text(self, selector):
        return self._first(selector, lambda e: e.text)

    def set_value(self, selector, value):
        """Put ``value`` into a text field or area at once (typing a
        template key by key is slow and auto-indents nothing, but why
        wait)."""
        field = self.wait_css(selector)
        self.driver.execute_script(
            "arguments[0].value = arguments[1];"
            "arguments[0].dispatchEvent(new Event('input'));",
            field,
            value,
        )
        return field

    def submit(self, fields, button, lands_on):
        """Fill ``fields`` ((selector, value) pairs), press ``button``,
        confirm, and wait for the page whose URL has ``lands_on``;
        return the last segment of its URL (the new thing's id)."""
        for selector, value in fields:
            self.set_value(selector, value)
        self.click(button)
        self.confirm()
        self.wait_for(
            "the page of " + lands_on,
            lambda: lands_on in self.driver.current_url,
        )
        return self.driver.current_url.rsplit("/", 1)[1]

    def console(self):
        try:
            return [e["message"] for e in self.driver.get_log("browser")]
        except Exception:  # noqa: BLE001 - not every driver keeps the log
            return []

    def confirm(self):
        """Press Confirm in the page's confirmation dialog."""
        self.wait_for(
            "the confirmation dialog",
            lambda: self.css("dialog#confirm[open]"),
        )
        self.click("#confirm-yes")
