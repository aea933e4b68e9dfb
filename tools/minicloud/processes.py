"""Running the test cloud's commands and daemons.

Every daemon starts in a session of its own, so that its PID is also its
process group: ``stop`` signals the group (gunicorn's worker, the oslo
service workers of nova-conductor and nova-scheduler go with their
parent) and the launcher records nothing but these PIDs.
"""

import os
import signal
import subprocess
import time

import requests


class StartFailed(RuntimeError):
    """A step of the start-up failed; the message says which and why."""


def _tail(path, size=4000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-size:]
    except OSError:
        return ""


def run(layout, name, argv, env=None, timeout=600):
    """Run one set-up command to its end, its output in ``log/<name>``.

    :raises StartFailed: with the end of its output if it fails.
    """
    log = layout.path("log", "%s.out" % name)
    with open(log, "ab") as out:
        result = subprocess.run(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **(env or {})),
            timeout=timeout,
        )
    if result.returncode != 0:
        raise StartFailed(
            "%s failed (rc %d):\n%s"
            % (" ".join(argv), result.returncode, _tail(log))
        )


def spawn(layout, name, argv, env=None):
    """Start a daemon in its own session; record its PID in the layout."""
    log = open(layout.path("log", "%s.out" % name), "ab")
    env = dict(os.environ, **(env or {}))
    env.update([_marker(layout).split("=", 1)])
    proc = subprocess.Popen(
        argv,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
        cwd=layout.dir,
    )
    log.close()
    layout.pids[name] = proc.pid
    layout.save()
    return proc


def gunicorn(layout, name, port, module, prog, env):
    """Serve the WSGI ``module`` of a service on loopback ``port``."""
    wsgi_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wsgi")
    argv = [
        layout.bin("gunicorn"),
        "-w",
        "1",
        "-k",
        "gthread",
        "--threads",
        "8",
        "--no-control-socket",
        "--timeout",
        "120",
        # One line a request (method, path, status, user agent): what a
        # benchmark counts the cloud API requests of a client by.
        "--access-logfile",
        layout.path("log", "%s-access.log" % name),
        "-b",
        "127.0.0.1:%d" % port,
        "--pythonpath",
        wsgi_dir,
        "minicloud_wsgi:application",
    ]
    env = dict(env, MINICLOUD_WSGI_MODULE=module, MINICLOUD_PROG=prog)
    return spawn(layout, name, argv, env)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of this process still answers signal 0.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_http(layout, name, url, timeout=120):
    """Wait until ``url`` answers (any HTTP status) while ``name`` runs.

    :raises StartFailed: if the daemon exits or the deadline passes.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(layout.pids[name]):
            raise StartFailed(
                "%s exited:\n%s"
                % (name, _tail(layout.path("log", "%s.out" % name)))
            )
        try:
            requests.get(url, timeout=2)
            return
        except requests.RequestException:
            time.sleep(0.3)
    raise StartFailed(
        "%s did not answer on %s within %d s" % (name, url, timeout)
    )


def stop_all(layout, timeout=20):
    """SIGTERM every recorded process group, SIGKILL what remains."""
    pids = [pid for pid in layout.pids.values() if _ours(layout, pid)]
    for pid in pids:
        signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(map(_group_alive, pids)):
        _reap(pids)
        time.sleep(0.2)
    for pid in pids:
        signal_group(pid, signal.SIGKILL)
    _reap(pids)
    layout.pids.clear()


def _ours(layout, pid):
    """False if the PID now belongs to a process outside this cloud (the
    cloud died and the PID was reused): ours carry the cloud's prefix in
    their environment (their command lines are rewritten by gunicorn)."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            environ = f.read().split(b"\0")
    except OSError:
        return True  # gone; its group may still have members
    return _marker(layout).encode() in environ or not environ[0]


def _marker(layout):
    return "MINICLOUD_ID=%s" % layout.prefix


def _group_alive(pgid):
    """True while the leader or any other member of the group runs."""
    if alive(pgid):
        return True
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def signal_group(pid, sig):
    """Signal the process group ``pid`` leads, if it still exists."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def _reap(pids):
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
