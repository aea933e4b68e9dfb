"""Stacks created and updated through the load balancer the whole time.

``Load`` runs ``slots`` threads; each creates a stack of TestResources,
waits for CREATE_COMPLETE, updates every resource's value, waits for
UPDATE_COMPLETE, and starts over with a new stack. Every operation is
recorded (start, end, outcome) and so is every HTTP answer worse than
503: a 503 is the API saying "try again" during an outage (the call is
asked again), anything else is a failure the scenario reports.
"""

import threading
import time

from heatclient import exc as heat_exc
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import noauth, session

from harness import helpers, polling

TR = "OS::Heat::TestResource"
# How long an operation may take, outage included, before it counts as
# not converging.
OP_TIMEOUT = 240


def client(url, project="demo"):
    from heatclient import client as heat_client

    sess = session.Session(
        auth=noauth.NoAuth(), additional_headers={"X-Auth-User": "tester"}
    )
    return heat_client.Client(
        "1", session=sess, endpoint_override="%s/v1/%s" % (url, project)
    )


def _template(resources, value, wait):
    return helpers.template(
        {
            "r%d" % i: {
                "type": TR,
                "properties": {"value": value, "wait_secs": wait},
            }
            for i in range(resources)
        }
    )


class Load:
    def __init__(self, url, name, slots=3, resources=3, wait=1.0):
        self.url = url
        self.name = name
        self.slots = slots
        self.resources = resources
        self.wait = wait
        self.ops = []  # (start, end, what, ok, detail)
        self.bad_answers = []  # (time, code or error, call)
        self.answers_503 = 0
        self.stacks = {}  # name: id
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = []

    # Running ---------------------------------------------------------------
    def start(self):
        for slot in range(self.slots):
            thread = threading.Thread(
                target=self._run, args=(slot,), daemon=True
            )
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self):
        """Let every thread finish the operation it is in, then return."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=OP_TIMEOUT * 2 + 30)

    def _run(self, slot):
        heat = client(self.url)
        n = 0
        while not self._stop.is_set():
            n += 1
            name = "%s-%d-%d" % (self.name, slot, n)
            stack_id = self._op("create", self._create_stack, heat, name)
            if stack_id is not None:
                self._op("update", self._update_stack, heat, stack_id, n)

    def _op(self, what, operation, *args):
        """Run one operation to its end; record its outcome."""
        begun = time.time()
        try:
            result = operation(*args)
        except Exception as exc:  # noqa: BLE001 - what the scenario counts
            self._record(begun, what, False, repr(exc)[:300])
            return None
        self._record(begun, what, True, result)
        return result

    def _create_stack(self, heat, name):
        stack_id = self._create(heat, name)
        self._wait(heat, stack_id, "CREATE_COMPLETE")
        return stack_id

    def _update_stack(self, heat, stack_id, n):
        template = _template(self.resources, "v%d" % n, 0.2)
        self._call(
            "update",
            lambda: heat.stacks.update(stack_id, template=template),
        )
        self._wait(heat, stack_id, "UPDATE_COMPLETE")
        return stack_id

    def _record(self, begun, what, ok, detail):
        with self._lock:
            self.ops.append((begun, time.time(), what, ok, detail))

    def _call(self, what, call, timeout=OP_TIMEOUT):
        """``call()``; a 503 (or the balancer finding no API up) is asked
        again, every worse answer is recorded and raised."""
        answer = []

        def answered():
            try:
                answer.append(call())
                return True
            except heat_exc.HTTPServiceUnavailable:
                with self._lock:
                    self.answers_503 += 1
                return False
            except heat_exc.HTTPException as exc:
                with self._lock:
                    self.bad_answers.append((time.time(), exc.code, what))
                raise
            except ks_exc.ConnectionError as exc:
                with self._lock:
                    self.bad_answers.append((time.time(), repr(exc), what))
                raise

        polling.until(
            answered, timeout, "%s: 503 for %d s" % (what, timeout), 0.5
        )
        return answer[0]

    def _create(self, heat, name):
        def create():
            # A create answered 503 may have been stored: look first.
            try:
                return heat.stacks.get(name).id
            except heat_exc.HTTPNotFound:
                pass
            return heat.stacks.create(
                stack_name=name,
                template=_template(self.resources, "v0", self.wait),
            )["stack"]["id"]

        stack_id = self._call("create", create)
        with self._lock:
            self.stacks[name] = stack_id
        return stack_id

    def _wait(self, heat, stack_id, status):
        """Until the stack is ``status``; a FAILED state ends the wait.
        (Right after an update call the stack may still show the
        previous COMPLETE.)"""

        def reached():
            stack = self._call(
                "get", lambda: heat.stacks.get(stack_id, resolve_outputs=False)
            )
            if stack.stack_status.endswith("FAILED"):
                raise AssertionError(
                    "%s %s: %s"
                    % (stack_id, stack.stack_status, stack.stack_status_reason)
                )
            return stack.stack_status == status

        polling.until(
            reached, OP_TIMEOUT, "%s %s" % (stack_id, status), interval=0.5
        )

    # Reading -----------------------------------------------------------------
    def recovery_seconds(self, fault):
        """Seconds from ``fault`` until every operation in flight at the
        fault completed and one begun after it completed too (None if
        that has not happened)."""
        with self._lock:
            ops = list(self.ops)
        in_flight = [op for op in ops if op[0] <= fault <= op[1]]
        after = sorted(
            (op for op in ops if op[0] > fault and op[3]), key=lambda o: o[1]
        )
        if not after:
            return None
        return max([op[1] for op in in_flight] + [after[0][1]]) - fault

    def failed_ops(self):
        with self._lock:
            return [op for op in self.ops if not op[3]]
