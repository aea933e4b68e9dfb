"""Run one command with a deadline, a disk bound and its output logged.

Fetching a commit and building an image run programs on input a user
controls; each such program runs through ``run()``: an argv list (never a
shell), an environment given whole (nothing inherited), its own process
group (so a timeout kills what it started too), stdout and stderr merged
and handed line by line to a ``log`` callback while it runs, and a
directory whose size is watched: past the bound the command is killed.
"""

import os
import signal
import subprocess
import threading
import time

from oslo_log import log as logging

from heat_lite.common import exception

LOG = logging.getLogger(__name__)

_POLL = 0.2
_MAX_LINE = 4096


class CommandFailed(exception.HeatLiteException):
    msg_fmt = "%(what)s failed: %(reason)s"


class CommandTimedOut(CommandFailed):
    msg_fmt = "%(what)s did not finish within %(timeout)d s"


class CommandTooLarge(CommandFailed):
    msg_fmt = "%(what)s wrote more than %(limit)d bytes under %(path)s"


def tree_size(path):
    """Bytes used by the files under ``path`` (symlinks not followed)."""
    total = 0
    stack = [path]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    st = entry.stat(follow_symlinks=False)
                    # Sparse files count by what they hold on disk.
                    total += min(st.st_size, st.st_blocks * 512)
            except FileNotFoundError:
                continue
    return total


def base_env(**extra):
    """A minimal environment: PATH, a C locale, and ``extra``."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C",
        "LC_ALL": "C",
    }
    env.update(extra)
    return env


def _pump(stream, log):
    failed = False
    for raw in iter(lambda: stream.readline(_MAX_LINE), b""):
        if failed:
            continue
        try:
            log(raw.decode("utf-8", "replace").rstrip("\n"))
        except Exception:
            # A log that cannot store a line must not stop the draining:
            # the command would block on a full pipe until its timeout.
            # Said once; the rest of the output is drained unlogged.
            LOG.exception("build log callback failed; output dropped")
            failed = True


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run(
    argv, what, cwd, env, timeout, log, watch=None, limit=None, check=None
):
    """Run ``argv`` to completion.

    :param argv: the command, a list of str; argv[0] is looked up in
        ``env['PATH']``.
    :param what: names the command in errors ("git fetch").
    :param cwd: working directory.
    :param env: the whole environment of the command.
    :param timeout: seconds before the command (and its group) is killed.
    :param log: called with each line of output (str, no newline).
    :param watch: a directory whose size is bounded by ``limit`` bytes.
    :param check: called between two looks at the command (every
        ``_POLL`` s); what it raises (a build's cancel) kills the command
        and its group and is raised.
    :raises CommandTimedOut, CommandTooLarge, CommandFailed:
    """
    if not isinstance(argv, (list, tuple)) or not all(
        isinstance(a, str) for a in argv
    ):
        raise TypeError("argv must be a list of str")
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise CommandFailed(what=what, reason=str(exc)) from exc
    pump = threading.Thread(target=_pump, args=(proc.stdout, log), daemon=True)
    pump.start()
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                proc.wait(timeout=_POLL)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline:
                _kill(proc)
                raise CommandTimedOut(what=what, timeout=timeout)
            if check is not None:
                check()
            if watch and limit is not None and tree_size(watch) > limit:
                _kill(proc)
                raise CommandTooLarge(what=what, limit=limit, path=watch)
    finally:
        # Also whatever the command left running in its group.
        _kill(proc)
        pump.join(timeout=5)
        proc.stdout.close()
    if watch and limit is not None and tree_size(watch) > limit:
        raise CommandTooLarge(what=what, limit=limit, path=watch)
    if proc.returncode != 0:
        raise CommandFailed(
            what=what, reason="exit status %d" % proc.returncode
        )
