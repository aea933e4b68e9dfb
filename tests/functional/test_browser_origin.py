"""Web pages of other origins cannot drive a local heat_lite (noauth),
in real headless Chromium and Firefox (tests/functional/browser.py).

The pages are served by small HTTP servers of the test, on other ports
(other origins) of 127.0.0.1; their script is the attack, as a page
would run it, and writes what it saw into the page. heatclient then
says what happened to the stacks:

* a page of another origin POSTs ``text/plain`` with ``no-cors`` (the
  browser asks nobody): no stack created, none suspended, no signal
  (refused for its Origin), and it cannot read answers;
* a page of an origin in ``[api] allowed_origins`` may signal (no body)
  but still cannot send ``text/plain`` (415);
* clients that are not browsers keep working: python-heatclient's
  legacy client (the session client is every other test's), a body
  typed ``application/json; charset=UTF-8``, the ``curl_cli`` a wait
  condition handle hands a server;
* DNS rebinding: a page loaded from ``rebind.test`` whose name then
  points at heat_lite's address and port sends same-origin JSON and
  reads the answers: it gets the Host refusal only. The name's address
  changes at the TCP level (the browser resolves ``rebind.test`` to
  127.0.0.2, where a forwarder sends connections to the attacker's
  server, then to heat_lite).
"""

import http.server
import json
import shlex
import socket
import subprocess
import threading

import pytest
import requests
from heatclient import client as heat_client

from harness import deployment as deployment_mod
from harness import helpers
from tests.functional import browser as browser_mod

pytestmark = pytest.mark.functional
REBIND = "rebind.test"
REBIND_ADDRESS = "127.0.0.2"
VICTIM = helpers.template({"h": {"type": "OS::Heat::WaitConditionHandle"}})
EVIL = helpers.template({"r": {"type": "OS::Heat::None"}})
CREATE = {"stack_name": "evil", "template": EVIL}
PAGE = """<!doctype html>
<html><head><title>elsewhere</title></head><body>
<pre id="state"></pre><pre id="result"></pre>
<script>
const attempts = %(attempts)s;
const show = (id, text) => { document.getElementById(id).textContent = text; };
async function attempt([name, url, init]) {
  try {
    const r = await fetch(url, init);
    let text = null;
    try { text = await r.text(); } catch (e) { text = null; }
    return {name: name, type: r.type, status: r.status, text: text};
  } catch (e) {
    return {name: name, error: String(e)};
  }
}
async function rebound() {
  // Poll the page's own origin until it is no longer the attacker's.
  for (let i = 0; i < 600; i++) {
    try {
      const r = await fetch("/probe", {cache: "no-store"});
      if ((await r.text()) !== "attacker") return true;
      show("state", "waiting");
    } catch (e) { show("state", "waiting: " + e); }
    await new Promise(done => setTimeout(done, 100));
  }
  return false;
}
(async () => {
  if (%(rebind)s && !(await rebound())) { show("result", "[]"); return; }
  const out = [];
  for (const a of attempts) out.push(await attempt(a));
  show("result", JSON.stringify(out));
})();
</script></body></html>
"""


class _Site:
    """An HTTP server of another origin: ``pages`` by path; ``/probe``
    answers ``attacker`` (the rebinding page polls it)."""

    def __init__(self, host="127.0.0.1", port=0):
        pages = self.pages = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                if self.path == "/probe":
                    body, kind = b"attacker", "text/plain"
                else:
                    body = pages.get(self.path, "").encode()
                    kind = "text/html"
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.port = self.server.server_address[1]
        self.origin = "http://%s:%d" % (host, self.port)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class _Rebinder:
    """``rebind.test``'s address, changing under a loaded page: what
    connects to 127.0.0.2:<port> reaches ``first`` until ``rebind()``,
    then ``then``; rebinding closes the open connections (a kept-alive
    one would still reach the attacker)."""

    def __init__(self, port, first, then):
        self.target, self._then = first, then
        self._open = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server((REBIND_ADDRESS, port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(self.target)
            except OSError:
                return
            with self._lock:
                self._open |= {client, upstream}
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._pump, args=(src, dst), daemon=True
                ).start()

    def _pump(self, src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._drop(src, dst)

    def _drop(self, *socks):
        with self._lock:
            for sock in socks:
                self._open.discard(sock)
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def rebind(self):
        self.target = self._then
        with self._lock:
            socks = list(self._open)
        self._drop(*socks)

    def close(self):
        # shutdown wakes the thread blocked in accept (close alone would
        # leave the port bound until a connection came).
        self._drop(self._listener)
        self.rebind()


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """The attacker's sites and heat_lite, which allows one of them."""
    evil, trusted = _Site(), _Site()
    try:
        dep = deployment_mod.Deployment(
            "sqlite",
            tmp_path_factory.mktemp("origin"),
            extra_conf="\n[api]\nallowed_origins = %s\n" % trusted.origin,
        )
        try:
            yield dep.start(), evil, trusted
        finally:
            dep.stop()
    finally:
        evil.close()
        trusted.close()


@pytest.fixture(scope="module", params=browser_mod.NAMES)
def browser(request):
    yield from browser_mod.running(
        request.param, resolve={REBIND: REBIND_ADDRESS}
    )


def _victim(dep, b, name):
    """A stack of a project of this test and browser's own, with a
    wait condition handle to signal; returns (heat, stack, api base)."""
    project = "%s-%s" % (name, b.name)
    heat = dep.client(project)
    created = heat.stacks.create(stack_name="victim", template=VICTIM)
    stack = helpers.wait_for_status(
        heat, created["stack"]["id"], "CREATE_COMPLETE"
    )
    return heat, stack, dep.endpoint(project)


def _attack(b, site, path, attempts, rebind=None):
    """Load the attack page from ``site``; return what its script saw."""
    site.pages[path] = PAGE % {
        "attempts": json.dumps(attempts),
        "rebind": "true" if rebind else "false",
    }
    origin = "http://%s:%d" % (REBIND, rebind[0]) if rebind else site.origin
    b.driver.get(origin + path)
    if rebind:
        b.wait_for(
            "the page on the attacker's address",
            lambda: (b.text("#state") or "").startswith("waiting"),
        )
        rebind[1].rebind()
    raw = b.wait_for("the attack's end", lambda: b.text("#result"), 60)
    return {a["name"]: a for a in json.loads(raw)}


def _no_cors(body=None, content_type="text/plain"):
    init = {"method": "POST", "mode": "no-cors"}
    if body is not None:
        init["body"] = json.dumps(body)
        init["headers"] = {"Content-Type": content_type}
    return init


def _json_post(body):
    """A POST of JSON, as ``fetch`` sends it in ``cors`` mode (a
    preflight first when it goes to another origin)."""
    return {
        "method": "POST",
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
    }


def _signals(heat, stack):
    return heat.resources.metadata(stack.id, "h")


def _changes(api, stack, order=("create", "suspend", "signal")):
    """Attempts at changing things, ``no-cors`` as the issue's page
    made them: create a stack ``evil``, suspend the victim, signal its
    handle (no body)."""
    own = "%s/stacks/victim/%s" % (api, stack.id)
    made = {
        "create": [api + "/stacks", _no_cors(CREATE)],
        "suspend": [own + "/actions", _no_cors({"suspend": None})],
        "signal": [own + "/resources/h/signal", _no_cors()],
    }
    return [[name, *made[name]] for name in order]


def _nothing_changed(heat, stack):
    """The page's fetches have been answered: whatever they did is done
    (a create is stored, a suspend started, a signal delivered)."""
    assert sorted(s.stack_name for s in heat.stacks.list()) == ["victim"]
    assert heat.stacks.get(stack.id).stack_status == "CREATE_COMPLETE"


def test_a_page_of_another_origin_changes_nothing(sites, browser):
    dep, evil, _trusted = sites
    heat, stack, api = _victim(dep, browser, "cross")
    form = _no_cors(CREATE, "application/x-www-form-urlencoded")
    seen = _attack(
        browser,
        evil,
        "/cross",
        _changes(api, stack)
        + [
            ["create_form", api + "/stacks", form],
            ["create_json", api + "/stacks", _json_post(CREATE)],
            ["read", api + "/stacks", {}],
        ],
    )
    # no-cors requests are sent, their answers are opaque to the page.
    for name in ("create", "create_form", "suspend", "signal"):
        assert seen[name].get("type") == "opaque", seen[name]
        assert seen[name]["status"] == 0 and not seen[name]["text"]
    # JSON needs a preflight, reading needs CORS: the API grants neither.
    for name in ("create_json", "read"):
        assert "error" in seen[name], seen[name]
    _nothing_changed(heat, stack)
    assert _signals(heat, stack) == {}


def test_an_allowed_origin_cannot_send_text_either(sites, browser):
    """``[api] allowed_origins`` lets a page's requests through the
    Origin check (a signal, which has no body, arrives) but a body must
    still be JSON, which that page cannot send without CORS."""
    dep, _evil, trusted = sites
    heat, stack, api = _victim(dep, browser, "allowed")
    order = ("signal", "create", "suspend")
    seen = _attack(browser, trusted, "/allowed", _changes(api, stack, order))
    assert all(s.get("type") == "opaque" for s in seen.values()), seen
    assert len(_signals(heat, stack)) == 1
    _nothing_changed(heat, stack)


def test_a_rebound_name_gets_refusals_only(sites, browser):
    """The page's origin is now heat_lite's address and port under the
    attacker's name: its JSON is same-origin, its answers readable. The
    Host check leaves it nothing to read but the refusal."""
    dep, evil, _trusted = sites
    heat, stack, _api = _victim(dep, browser, "rebound")
    project = "rebound-" + browser.name
    rebinder = _Rebinder(
        dep.port, ("127.0.0.1", evil.port), ("127.0.0.1", dep.port)
    )
    try:
        seen = _attack(
            browser,
            evil,
            "/rebound",
            [
                ["create", "/v1/%s/stacks" % project, _json_post(CREATE)],
                ["read", "/v1/%s/stacks" % project, {}],
                ["versions", "/", {}],
            ],
            rebind=(dep.port, rebinder),
        )
    finally:
        rebinder.close()
    assert set(seen) == {"create", "read", "versions"}, seen
    for answer in seen.values():
        assert answer.get("status") == 403, answer
        error = json.loads(answer["text"])["error"]
        assert error["type"] == "HostNotAllowed", answer
        assert (
            "victim" not in answer["text"] and stack.id not in answer["text"]
        )
    _nothing_changed(heat, stack)


def test_clients_keep_working(sites):
    dep = sites[0]
    heat = dep.client("clients")
    # python-heatclient without keystoneauth (HTTPClient), as older
    # Horizon and scripts make it: JSON bodies, typed bodiless DELETEs.
    legacy = heat_client.Client(
        "1", endpoint=dep.endpoint("clients"), token="ignored-in-noauth"
    )
    made = legacy.stacks.create(stack_name="legacy", template=VICTIM)
    stack_id = made["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    legacy.actions.suspend(stack_id)
    helpers.wait_for_status(heat, stack_id, "SUSPEND_COMPLETE")
    legacy.actions.resume(stack_id)
    helpers.wait_for_status(heat, stack_id, "RESUME_COMPLETE")
    # Heat's own clients say the charset.
    typed = requests.post(
        dep.endpoint("clients") + "/stacks",
        data=json.dumps({"stack_name": "typed", "template": EVIL}),
        headers={"Content-Type": "application/json; charset=UTF-8"},
        timeout=30,
    )
    assert typed.status_code == 201, typed.text
    # The in-guest agent's command line, as handed out.
    curl_cli = heat.resources.get(
        stack_id, "h", with_attr=["curl_cli"]
    ).attributes["curl_cli"]
    done = subprocess.run(
        [*shlex.split(curl_cli), "--data-binary", '{"status": "SUCCESS"}'],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert " 200 " in done.stdout.splitlines()[0], done.stdout
    assert len(heat.resources.metadata(stack_id, "h")) == 1
    legacy.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
