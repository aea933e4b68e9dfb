"""Run ``openstack`` commands in one long-lived CLI process per test worker.

Starting ``openstack`` imports openstackclient, cliff, keystoneauth and
every installed plugin's entry points: one to two seconds idle and five
to eight on a loaded CI machine, paid again by every command of a test
that types thirty of them. What those tests check is the CLI's answer to
heat_lite (its output, its exit status, its error text), not the
interpreter starting, so the commands go to one ``python -m
harness.osc`` process that has imported the CLI once and runs each
command line in a new ``OpenStackShell`` -- the object the ``openstack``
console script builds -- with its own stdout, stderr and environment.
``run`` answers like ``subprocess.run(..., capture_output=True,
text=True)``.

``--wait`` sleeps heatclient's poll period (five seconds) between two
looks at the events; the server process polls at most once a second
(``POLL_SECONDS``): the same requests and the same answer, sooner.

For noauth commands (``--os-auth-type none --os-endpoint ...``) only:
with keystone password auth a second user's command was seen to list
the first user's stacks (authentication state kept between commands in
one process), so test_keystone.py runs a process per command. The
console script itself (entry point, a fresh process, a terminal) is run
as a real process by the tests about it (test_client_package.py,
test_osc_plugin.py, test_client_preview.py).
"""

import atexit
import contextlib
import io
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time

POLL_SECONDS = 1.0
_LOCK = threading.Lock()
_SERVER = None


class Result:
    """What ``subprocess.run`` returns, the fields the tests read."""

    def __init__(self, args, returncode, stdout, stderr):
        self.args = args
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self):
        return "Result(args=%r, returncode=%r)" % (self.args, self.returncode)


class _Server:
    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.osc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )

    def call(self, request, timeout):
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.stop()
            raise subprocess.TimeoutExpired(request["argv"], timeout)
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise RuntimeError("the openstack CLI process exited (%s)" % code)
        return json.loads(line)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _stop():
    if _SERVER is not None:
        _SERVER.stop()


atexit.register(_stop)


def run(argv, env=None, cwd=None, timeout=180):
    """``openstack <argv>`` with ``env`` (default: this process's
    environment) in ``cwd``; a Result with returncode, stdout, stderr."""
    global _SERVER
    argv = [str(a) for a in argv]
    request = {
        "argv": argv,
        "env": dict(os.environ if env is None else env),
        "cwd": str(cwd or os.getcwd()),
    }
    with _LOCK:
        if _SERVER is None or not _SERVER.alive():
            _SERVER = _Server()
        try:
            answer = _SERVER.call(request, timeout)
        except Exception:
            _SERVER.stop()
            _SERVER = None
            raise
    return Result(
        ["openstack"] + argv,
        answer["returncode"],
        answer["stdout"],
        answer["stderr"],
    )


# The server side: ``python -m harness.osc``.


def _poll_at_most(seconds):
    """heatclient's ``--wait`` loop sleeps through ``time.sleep`` of its
    event_utils module: a module of its own there, so nothing else in
    the process polls faster."""
    from heatclient.common import event_utils

    real = time.sleep

    class _Time:
        def __getattr__(self, name):
            return getattr(time, name)

        @staticmethod
        def sleep(period):
            real(min(period, seconds))

    event_utils.time = _Time()


def _exit_status(code, err):
    """The status a process leaving by ``sys.exit(code)`` ends with."""
    if code is None or isinstance(code, int):
        return code or 0
    err.write("%s\n" % code)
    return 1


def _one(request, requests):
    from openstackclient import shell

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    try:
        sys.stdin = io.StringIO()  # no prompt reads the requests
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = shell.OpenStackShell().run(request["argv"])
            except SystemExit as exc:  # --help, a usage error: as Python
                code = _exit_status(exc.code, err)
            except Exception as exc:  # noqa: BLE001 - the CLI's own crash
                err.write("%s: %s\n" % (type(exc).__name__, exc))
                code = 1
    finally:
        # Every shell configures logging anew: its handlers write to this
        # command's buffers, not to the next one's.
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
        sys.stdin = requests
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return {
        "returncode": code or 0,
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
    }


def _serve():
    # Answers go to a private copy of stdout; anything written to file
    # descriptor 1 by a library goes to stderr and cannot break a line.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.__stdout__ = os.fdopen(1, "w", closefd=False)
    sys.argv[0] = "openstack"  # argparse's prog: "usage: openstack ..."
    from openstackclient import shell  # noqa: F401 - import once, here

    _poll_at_most(POLL_SECONDS)
    requests = sys.stdin
    for line in requests:
        answers.write(json.dumps(_one(json.loads(line), requests)) + "\n")
        answers.flush()


if __name__ == "__main__":
    _serve()
