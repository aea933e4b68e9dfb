"""One Horizon under a directory: its settings, log and recorded PID.

Django's own server (``runserver --insecure --noreload``: one process,
a thread per request, the static files served from the venv's collected
and compressed assets) on a free loopback port, in a session of its own
so that its PID is its process group. ``<dir>/horizon.json`` records the
PID before anything waits on it, so ``stop`` works after a crash too.
"""

import json
import os
import secrets
import signal
import subprocess
import time

import requests

from harness import polling
from tools.horizon import venv as venv_mod
from tools.minicloud import processes
from tools.minicloud.heat_lite import free_port

START_TIMEOUT = 180
STOP_TIMEOUT = 20


STATE = "horizon.json"


def _record(directory, state):
    """Write ``state`` to ``<directory>/horizon.json`` (atomically)."""
    path = os.path.join(directory, STATE)
    with open(path + ".tmp", "w") as f:
        json.dump(state, f, indent=2, sort_keys=True)
    os.replace(path + ".tmp", path)


class Horizon:
    """A Horizon whose files are in ``directory``."""

    def __init__(self, directory):
        self.dir = os.path.abspath(directory)
        self.log_file = os.path.join(self.dir, "horizon.log")
        self.state = {}
        self._proc = None

    @classmethod
    def load(cls, directory):
        """The Horizon recorded in ``directory``.

        :raises FileNotFoundError: if none was started there.
        """
        horizon = cls(directory)
        with open(os.path.join(horizon.dir, STATE)) as f:
            horizon.state = json.load(f)
        return horizon

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.state["port"]

    def start(self, keystone_url, page_size=20, cache_dir=None, log=print):
        """Install (once, cached), configure and serve; return self once
        the login page answers.

        :raises RuntimeError: if the server exits or does not answer.
        """
        os.makedirs(self.dir, exist_ok=True)
        began = time.monotonic()
        venv, installed = venv_mod.ensure(cache_dir, log=log)
        self.state = {
            "venv": venv,
            "port": free_port(),
            "keystone_url": keystone_url,
            "pid": None,
            "timings": {"install": round(installed, 1)},
        }
        venv_mod.write_settings(
            self.dir,
            venv,
            keystone_url=keystone_url,
            secret=secrets.token_hex(16),
            page_size=page_size,
        )
        served = time.monotonic()
        with open(self.log_file, "ab") as out:
            self._proc = subprocess.Popen(
                [
                    os.path.join(venv, "bin", "python"),
                    "-m",
                    "django",
                    "runserver",
                    "--insecure",
                    "--noreload",
                    "127.0.0.1:%d" % self.state["port"],
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=venv_mod.django_env(venv, self.dir),
                cwd=self.dir,
                start_new_session=True,
            )
        self.state["pid"] = self._proc.pid
        _record(self.dir, self.state)
        self._wait_for_login()
        timings = self.state["timings"]
        timings["serve"] = round(time.monotonic() - served, 1)
        timings["total"] = round(time.monotonic() - began, 1)
        _record(self.dir, self.state)
        return self

    def _wait_for_login(self):
        login = self.url + "/auth/login/"

        def up():
            if self._proc.poll() is not None:
                raise RuntimeError(
                    "Horizon exited (rc %s); see %s"
                    % (self._proc.returncode, self.log_file)
                )
            try:
                return requests.get(login, timeout=5).status_code == 200
            except (requests.ConnectionError, requests.Timeout):
                return False

        polling.until(
            up,
            START_TIMEOUT,
            "Horizon's login page at %s (log: %s)" % (login, self.log_file),
            interval=0.3,
            error=RuntimeError,
        )

    def stop(self):
        """Stop the recorded process group; forget it."""
        pid = self.state.get("pid")
        if pid:
            processes.signal_group(pid, signal.SIGTERM)
            gone = polling.awhile(
                lambda: not processes.alive(pid), STOP_TIMEOUT, interval=0.2
            )
            if not gone:
                processes.signal_group(pid, signal.SIGKILL)
        if self._proc is not None:
            self._proc.wait()
        self.state = {}
        if os.path.exists(os.path.join(self.dir, STATE)):
            os.remove(os.path.join(self.dir, STATE))
