"""A stand-in HTTP endpoint for tests of clients (the CLI, the CLI
runner): it answers every GET and POST with the JSON ``answer(path)``
returns and records what it was sent. For a client's own behaviour only;
what heat_lite answers is tested against heat_lite."""

import contextlib
import http.server
import json
import threading


@contextlib.contextmanager
def endpoint(answer, base="/v1/test"):
    """Yield (URL of ``base`` on a free loopback port, [(method, path,
    body or None)]) while the stand-in serves."""
    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, body):
            received.append((self.command, self.path, body))
            data = json.dumps(answer(self.path)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 - http.server's name
            self._answer(None)

        def do_POST(self):  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            self._answer(json.loads(self.rfile.read(length)))

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield "http://127.0.0.1:%d%s" % (server.server_port, base), received
    finally:
        server.shutdown()
        server.server_close()
