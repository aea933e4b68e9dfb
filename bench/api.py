"""A thin REST client of the Heat API v1, as the benchmark drives it.

The harness talks to heat_lite only over HTTP, like any client: it posts
templates and polls the stack's status. It uses ``requests`` rather than
python-heatclient so that each request's latency is measured exactly and
every poll is counted: a poll costs the service an RPC call and a few SQL
statements, and the runner subtracts that client-made cost from the
operation's counters (see ``bench.topology``).

Polling is adaptive: the interval grows with the time already waited
(``POLL_FRACTION`` of it, between a floor and ``POLL_MAX``), so a 50 ms
operation is timed to about a millisecond and a minute-long one costs a
few polls per second.
"""

import threading
import time

import requests

POLL_FRACTION = 0.02
POLL_MAX = 0.25
REQUEST_TIMEOUT = 300


class OpFailed(Exception):
    """The stack ended in a state other than the one awaited."""


class OpTimeout(Exception):
    """The stack did not finish within the operation deadline."""


class Tally:
    """Thread-safe record of polls and request latencies, shared by the
    clients of one run phase."""

    def __init__(self):
        self._lock = threading.Lock()
        self.polls = 0
        self.latencies = {}

    def add(self, kind, seconds):
        with self._lock:
            self.latencies.setdefault(kind, []).append(seconds)
            if kind == "GET":
                self.polls += 1


class StackClient:
    """Create, update, delete and wait for stacks of one project."""

    def __init__(self, endpoint, tally=None, poll_floor=0.01, user="bench"):
        self.endpoint = endpoint
        self.tally = tally if tally is not None else Tally()
        self.poll_floor = poll_floor
        self.last_accept = None  # seconds the last POST/PUT/DELETE took
        self.http = requests.Session()
        self.http.headers.update(
            {
                "X-Auth-User": user,
                "Content-Type": "application/json",
                "Accept": "application/json",
            }
        )

    def _request(self, method, path, body=None, expect=(200,)):
        start = time.monotonic()
        try:
            resp = self.http.request(
                method,
                self.endpoint + path,
                json=body,
                timeout=REQUEST_TIMEOUT,
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            # A dead or wedged API fails the operation, not the run.
            raise OpFailed("%s %s: %s" % (method, path, exc)) from None
        elapsed = time.monotonic() - start
        self.tally.add(method, elapsed)
        if method != "GET":
            self.last_accept = elapsed
        if resp.status_code not in expect:
            raise OpFailed(
                "%s %s: HTTP %d %s"
                % (method, path, resp.status_code, resp.text[:500])
            )
        return resp

    # Operations ----------------------------------------------------------
    def create(self, name, template):
        """POST a stack; return its (name, id) once accepted."""
        resp = self._request(
            "POST",
            "/stacks",
            {
                "stack_name": name,
                "template": template,
                "disable_rollback": True,
            },
            expect=(201,),
        )
        return name, resp.json()["stack"]["id"]

    def update(self, stack, template):
        """PUT a new template; return once the update is accepted."""
        self._request(
            "PUT",
            "/stacks/%s/%s" % stack,
            {"template": template},
            expect=(202,),
        )

    def delete(self, stack):
        self._request("DELETE", "/stacks/%s/%s" % stack, expect=(204, 404))

    def status(self, stack):
        """Return (stack_status, reason), or None once it is gone."""
        resp = self._request(
            "GET",
            "/stacks/%s/%s?resolve_outputs=false" % stack,
            expect=(200, 404),
        )
        if resp.status_code == 404:
            return None
        body = resp.json()["stack"]
        return body["stack_status"], body.get("stack_status_reason")

    def list_stacks(self, name=None):
        """(name, id) of the project's stacks, or of those named."""
        resp = self._request(
            "GET", "/stacks" + ("?name=%s" % name if name else "")
        )
        return [(s["stack_name"], s["id"]) for s in resp.json()["stacks"]]

    def resource_versions(self, stack, resource):
        """Every stored version of one resource (heat_lite's extension)."""
        resp = self._request(
            "GET",
            "/stacks/%s/%s/resources/%s/versions" % (stack + (resource,)),
        )
        return resp.json()["versions"]

    # Waiting -------------------------------------------------------------
    def wait(self, stack, expected, timeout, started=None):
        """Poll until ``stack`` is ``expected``; return the seconds from
        ``started`` (a ``time.monotonic()``; default now) to the poll that
        saw it.

        :raises OpFailed: the stack ended in another final state.
        :raises OpTimeout: still in progress after ``timeout`` seconds.
        """
        started = time.monotonic() if started is None else started
        deadline = started + timeout
        while True:
            state = self.status(stack)
            now = time.monotonic()
            if state is None and expected == "DELETE_COMPLETE":
                return now - started
            status, reason = state if state else ("GONE", "404")
            if status == expected:
                return now - started
            if not status.endswith("IN_PROGRESS"):
                raise OpFailed(
                    "stack %s is %s (%s), expected %s"
                    % (stack[0], status, reason, expected)
                )
            if now > deadline:
                raise OpTimeout(
                    "stack %s still %s after %.0f s"
                    % (stack[0], status, timeout)
                )
            interval = (now - started) * POLL_FRACTION
            time.sleep(min(POLL_MAX, max(self.poll_floor, interval)))

    def create_and_wait(self, name, template, timeout):
        """Create a stack; return ((name, id), seconds to COMPLETE)."""
        start = time.monotonic()
        stack = self.create(name, template)
        return stack, self.wait(stack, "CREATE_COMPLETE", timeout, start)

    def update_and_wait(self, stack, template, timeout):
        start = time.monotonic()
        self.update(stack, template)
        return self.wait(stack, "UPDATE_COMPLETE", timeout, start)

    def delete_and_wait(self, stack, timeout):
        start = time.monotonic()
        self.delete(stack)
        return self.wait(stack, "DELETE_COMPLETE", timeout, start)
