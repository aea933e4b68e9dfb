"""Real git repositories in tmp_path, and real servers on loopback."""

import http.server
import os
import socket
import subprocess
import threading

import pytest

from harness import polling
from harness.git_repo import GIT_ENV, git


class Repo:
    """A repository with a working tree, as a developer has one."""

    def __init__(self, path):
        self.path = str(path)
        os.makedirs(self.path)
        git(self.path, "init", "-q", "-b", "main")

    def commit(self, files, message="change"):
        for name, content in files.items():
            full = os.path.join(self.path, name)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            mode = "wb" if isinstance(content, bytes) else "w"
            with open(full, mode) as f:
                f.write(content)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "-m", message)
        return git(self.path, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    """``served/app``: two commits on main."""
    r = Repo(tmp_path / "served" / "app")
    r.first = r.commit({"README": "first\n", "src/app.py": "print(1)\n"})
    r.second = r.commit({"src/app.py": "print(2)\n"}, "second")
    return r


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, deadline=10):
    def listening():
        if proc.poll() is not None:
            raise RuntimeError("server exited with %s" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            return False

    polling.until(listening, deadline, "a server listening on %d" % port)


def _stop(proc):
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def git_daemon(repo, tmp_path):
    """``git daemon`` serving tmp_path/served on a loopback port."""
    port = free_port()
    base = str(tmp_path / "served")
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all",
         "--listen=127.0.0.1", "--port=%d" % port,
         "--base-path=" + base, base],
        env=GIT_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_port(port, proc)
        yield "git://127.0.0.1:%d" % port
    finally:
        _stop(proc)


class _Backend(http.server.BaseHTTPRequestHandler):
    """Runs ``git http-backend`` as a CGI program, for GET and POST.

    Python's own CGI server runs scripts as ``nobody`` when it is root,
    who may read neither tmp_path nor (safe.directory) the repository.
    """

    root = None
    protocol_v2 = True

    def do_GET(self):
        self._cgi()

    def do_POST(self):
        self._cgi()

    def _cgi(self):
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = dict(
            GIT_ENV,
            GIT_PROJECT_ROOT=self.root,
            GIT_HTTP_EXPORT_ALL="1",
            GATEWAY_INTERFACE="CGI/1.1",
            REQUEST_METHOD=self.command,
            PATH_INFO=path,
            QUERY_STRING=query,
            CONTENT_TYPE=self.headers.get("Content-Type", ""),
            CONTENT_LENGTH=str(length),
            REMOTE_ADDR="127.0.0.1",
        )
        if self.protocol_v2 and self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def serve_http(handler):
    """Serve ``handler`` on a loopback port in a thread; yield the base URL
    and stop the server afterwards."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(params=[True, False], ids=["v2", "v0"])
def http_backend(request, repo, tmp_path):
    """Smart HTTP (``git http-backend``) on loopback, speaking protocol v2
    or, like an old server, v0 (which serves advertised tips only)."""
    handler = type(
        "Backend",
        (_Backend,),
        {"root": str(tmp_path / "served"), "protocol_v2": request.param},
    )
    gen = serve_http(handler)
    url = next(gen)
    yield url, request.param
    next(gen, None)
