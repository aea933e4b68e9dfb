"""Run ``openstack`` commands through ``python -m harness.osc``.

The process runs the command line in an ``OpenStackShell`` -- the object
the ``openstack`` console script builds -- with its own stdout, stderr,
environment and working directory, and answers like ``subprocess.run(...,
capture_output=True, text=True)``. ``--wait`` sleeps heatclient's poll
period (five seconds) between two looks at the events; here it polls at
most once a second (``POLL_SECONDS``): the same requests and the same
answer, sooner.

One process serves every command of a test worker: an ``openstack``
start imports openstackclient, cliff, keystoneauth and every plugin's
entry points (1-2 s of CPU idle, 5-9 s under CI load), paid once instead
of by each of the thirty commands of a CLI test. A shell starts from
nothing but what ``_forget_clients`` has to reset: openstackclient hangs
each service's client on the ``ClientManager`` *class* (an
``osc_lib.clientmanager.ClientCache`` descriptor whose handle is set by
the first shell that asks), so without the reset every later shell of
the process used the first shell's orchestration client -- its endpoint
and its user's session. The console script itself (entry point, a fresh
install, a terminal) is run by the tests about it
(test_client_package.py, test_osc_plugin.py, test_client_preview.py).
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


def _forget_clients():
    """Drop the service clients an earlier shell made (see the module's
    docstring): every ``ClientCache`` on the ``ClientManager`` classes
    starts empty again."""
    from openstackclient.common import clientmanager as osc_manager
    from osc_lib import clientmanager as lib_manager

    for cls in {osc_manager.ClientManager, lib_manager.ClientManager}:
        for klass in cls.__mro__:
            for attr in vars(klass).values():
                if isinstance(attr, lib_manager.ClientCache):
                    attr._handle = None


def _one(request, requests):
    from openstackclient import shell

    _forget_clients()

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
