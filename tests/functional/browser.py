"""A real headless Chromium driving the dashboard: Debian's ``chromium``
and ``chromium-driver`` packages (``.ci/run`` installs them), through
Selenium with the system chromedriver (Selenium never downloads a
browser or a driver here).

Missing browser or driver: the tests skip (fail under CI=true, like any
other backing service).
"""

import os
import shutil
import tempfile
import time

from tests import backends

CHROMIUM = os.environ.get("HEAT_LITE_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get(
    "HEAT_LITE_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"
)
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
# The dashboard polls this fast in the tests (?poll_ms=), 2 s by default.
POLL_MS = 300
WAIT = 30


def available():
    """Skip (or fail under CI) without chromium, its driver or selenium."""
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


class Browser:
    """One Chromium with a fresh profile; ``page`` helpers with deadlines."""

    def __init__(self):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="heat-lite-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument("--user-data-dir=" + self.profile)
        self.driver = webdriver.Chrome(
            service=Service(executable_path=CHROMEDRIVER), options=options
        )
        self.driver.set_page_load_timeout(WAIT)

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def open(self, base_url, fragment=""):
        self.driver.get(
            "%s/dashboard/?poll_ms=%d#%s" % (base_url, POLL_MS, fragment)
        )

    def css(self, selector):
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait_for(self, what, check, timeout=WAIT):
        """Poll ``check()`` until it returns something true; return it."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                last = check()
            except Exception as exc:  # noqa: BLE001 - stale DOM, retry
                last = exc
            else:
                if last:
                    return last
            time.sleep(0.1)
        raise AssertionError(
            "timed out waiting for %s (last: %r)\nbrowser log: %s"
            % (what, last, self.console())
        )

    def wait_css(self, selector, timeout=WAIT):
        return self.wait_for(selector, lambda: self.css(selector), timeout)[0]

    def click(self, selector, timeout=WAIT):
        """Click the element ``selector`` finds, again if the page
        redrew it meanwhile (it polls the API and redraws)."""
        from selenium.common import exceptions

        def attempt():
            found = self.css(selector)
            if not found:
                return False
            try:
                found[0].click()
            except exceptions.StaleElementReferenceException:
                return False
            return True

        self.wait_for("a click on " + selector, attempt, timeout)

    def attr(self, selector, name):
        found = self.css(selector)
        return found[0].get_attribute(name) if found else None

    def text(self, selector):
        found = self.css(selector)
        return found[0].text if found else None

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
