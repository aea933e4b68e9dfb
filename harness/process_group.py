"""Processes a test or benchmark started, each in a session of its own,
and the cleanups that go with them (a database, a vhost): started,
logged and stopped one way for heat_lite's deployments and for the Heat
the benchmarks compare against."""

import os
import signal
import subprocess


class ProcessGroup:
    """``procs`` by key; each logs to ``<workdir>/<log_prefix><key>.log``."""

    STOP_TIMEOUT = 15

    def __init__(self, workdir, log_prefix=""):
        self.workdir = str(workdir)
        self.log_prefix = log_prefix
        self.procs = {}
        self._cleanups = []

    def log_path(self, key):
        return os.path.join(self.workdir, "%s%s.log" % (self.log_prefix, key))

    def spawn(self, key, argv, env=None):
        """Start ``argv`` as ``key`` in a new session (so that its whole
        process group can be signalled), output appended to its log."""
        with open(self.log_path(key), "ab") as log:
            self.procs[key] = subprocess.Popen(
                list(argv),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    def add_cleanup(self, cleanup):
        """Run ``cleanup()`` at stop, after the processes, newest first."""
        self._cleanups.append(cleanup)

    def log(self, key):
        with open(self.log_path(key), errors="replace") as f:
            return f.read()[-20000:]

    def stop(self):
        """SIGTERM every process group, SIGKILL what outlives
        ``STOP_TIMEOUT``, then run every cleanup (a failing one does not
        keep the others from running; the first error is raised)."""
        try:
            for proc in self.procs.values():
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
            for proc in self.procs.values():
                try:
                    proc.wait(timeout=self.STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        finally:
            cleanups, self._cleanups = self._cleanups, []
            first = None
            for cleanup in reversed(cleanups):
                try:
                    cleanup()
                except Exception as exc:  # noqa: BLE001 - run the others
                    first = first or exc
            if first is not None:
                raise first
