"""The README's quick start, run inside a fresh network namespace.

Run as ``unshare -n python -m tests.functional.quickstart_probe WORKDIR``:
the namespace has only a loopback device, so nothing else exists on the
network. A decoy listener on the broker's port (5672) counts whether
anything tries to reach a broker. ``heat-lite-all`` starts exactly as the
README shows it (no config, an empty HOME), then ``openstack stack create
--wait`` makes a stack, and the sockets of heat-lite-all are listed. A
second heat-lite-all on the same data directory must refuse to start; a
third one with its own HOME and port must not see the first one's stack.
The result is one JSON document on stdout.
"""

import json
import os
import socket
import subprocess
import sys
import threading

from bench import startup

BIN = os.path.dirname(sys.executable)
TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  hello:
    type: OS::Heat::RandomString
outputs:
  value:
    value: {get_attr: [hello, value]}
"""


def _decoy_broker(accepted):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 5672))
    listener.listen(16)

    def _accept():
        while True:
            conn, _ = listener.accept()
            accepted.append(1)
            conn.close()

    threading.Thread(target=_accept, daemon=True).start()


def _start(home, log_name, *args):
    log = open(os.path.join(home, log_name), "wb")  # noqa: SIM115
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
    return subprocess.Popen(
        [os.path.join(BIN, "heat-lite-all"), *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )


def _openstack(port, *args):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "OS_AUTH_TYPE": "none",
        "OS_ENDPOINT": "http://127.0.0.1:%d/v1/demo" % port,
    }
    result = subprocess.run(
        [os.path.join(BIN, "openstack"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return {
        "rc": result.returncode,
        "out": result.stdout,
        "err": result.stderr[-2000:],
    }


def _tcp_sockets(pid):
    """(local port, remote port, state) of every TCP socket of ``pid``."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        with open("/proc/%d/net/%s" % (pid, table)) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    found.append(
                        (
                            int(fields[1].split(":")[1], 16),
                            int(fields[2].split(":")[1], 16),
                            fields[3],
                        )
                    )
    return found


def _stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=20)


def main(workdir):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    accepted = []
    _decoy_broker(accepted)
    home = os.path.join(workdir, "home")
    os.makedirs(home)
    result = {}
    first = _start(home, "all.log")
    try:
        result["startup_seconds"] = startup.wait_http(8004, first)
        result["startup_cpu_seconds"] = startup.cpu_seconds(first.pid)
        result["load_per_core"] = os.getloadavg()[0] / os.cpu_count()
        template = os.path.join(workdir, "template.yaml")
        with open(template, "w") as f:
            f.write(TEMPLATE)
        result["create"] = _openstack(
            8004,
            "stack",
            "create",
            "-t",
            template,
            "--wait",
            "-f",
            "json",
            "mystack",
        )
        result["show"] = _openstack(
            8004, "stack", "show", "mystack", "-f", "json"
        )
        result["sockets"] = _tcp_sockets(first.pid)
        result["second_same_home"] = _second_same_home(workdir, home)
        result["other_home"] = _other_home(workdir)
    finally:
        _stop(first)
    result["broker_connections"] = len(accepted)
    with open(os.path.join(home, "all.log"), errors="replace") as f:
        result["log"] = f.read()[-4000:]
    return result


def _config(path, port):
    with open(path, "w") as f:
        f.write("[api]\nbind_port = %d\n" % port)
    return path


def _second_same_home(workdir, home):
    conf = _config(os.path.join(workdir, "8005.conf"), 8005)
    proc = _start(home, "second.log", "--config-file", conf)
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rc = None
    finally:
        _stop(proc)
    with open(os.path.join(home, "second.log"), errors="replace") as f:
        return {"rc": rc, "output": f.read()}


def _other_home(workdir):
    home = os.path.join(workdir, "other-home")
    os.makedirs(home)
    conf = _config(os.path.join(workdir, "8006.conf"), 8006)
    proc = _start(home, "all.log", "--config-file", conf)
    try:
        startup.wait_http(8006, proc)
        return _openstack(8006, "stack", "list", "-f", "json")
    finally:
        _stop(proc)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
