"""Slow and stalled clients against a real API process: 200 connections
that send half a request (half a head, or a head and half a body) must
not keep a normal client from getting answers within 2 s, and clients
that go away leave no traceback in the log."""

import concurrent.futures
import socket
import struct
import time

import pytest
import requests

from tests.functional import deployment as deployment_mod

TIMEOUT = 5
EXTRA = (
    """
[api]
client_socket_timeout = %d
"""
    % TIMEOUT
)
HALF_HEAD = (
    b"POST /v1/demo/stacks HTTP/1.1\r\nHost: x\r\n"
    b"Content-Type: application/json\r\nContent-Le"
)
HALF_BODY = (
    b"POST /v1/demo/stacks HTTP/1.1\r\nHost: x\r\n"
    b"Content-Type: application/json\r\nContent-Length: 1000\r\n"
    b"\r\n" + b'{"stack_name": "' + b"x" * 400
)


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("slow"), extra_conf=EXTRA
    )


def _open(port, payload):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(payload)
    return sock


def _reset(sock):
    """Close as a vanished client does (RST, nothing more sent)."""
    sock.setsockopt(
        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
    )
    sock.close()


def _answers_within(url, seconds, count):
    slowest = 0.0
    for _ in range(count):
        start = time.monotonic()
        response = requests.get(url, timeout=seconds)
        assert response.status_code == 200
        slowest = max(slowest, time.monotonic() - start)
    return slowest


def test_stalled_clients_do_not_starve_others(dep):
    socks = [
        _open(dep.port, HALF_HEAD if i % 2 else HALF_BODY) for i in range(200)
    ]
    # A body larger than what the gate waits for, then silence: a worker
    # reads it and meets the socket timeout.
    big = _open(
        dep.port,
        b"POST /v1/demo/stacks HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        b"Content-Type: application/json\r\n"
        b"Content-Length: 200000\r\n\r\n" % dep.port + b"{" * 40000,
    )
    try:
        url = dep.endpoint("demo") + "/stacks"
        slowest = _answers_within(url, 2, 20)
        assert slowest < 2
        # Half of them vanish mid-request; the rest stay until the
        # server's timeout closes them.
        for sock in socks[::2]:
            _reset(sock)
        deadline = time.monotonic() + TIMEOUT + 3
        while time.monotonic() < deadline:
            assert _answers_within(url, 2, 1) < 2
            time.sleep(0.2)
        for sock in socks[1::2]:
            sock.settimeout(0.5)
            assert sock.recv(100) == b""  # closed by the server
    finally:
        for sock in socks + [big]:
            sock.close()
    assert requests.get(url, timeout=2).status_code == 200
    log = dep.log("all")
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]


def test_many_connections_wait_without_threads(dep):
    """Far more idle connections than threads: answers stay fast."""
    socks = [
        socket.create_connection(("127.0.0.1", dep.port)) for _ in range(200)
    ]
    try:
        assert _answers_within(dep.endpoint("demo") + "/stacks", 2, 10) < 2
    finally:
        for sock in socks:
            sock.close()


@pytest.fixture(scope="module")
def one_thread(tmp_path_factory):
    extra = EXTRA + "threads = 1\nmax_queued_requests = 1\n"
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("queue"), extra_conf=extra
    )


def _wait_done(futures, count, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done = [f for f in futures if f.done()]
        if len(done) >= count:
            return done
        time.sleep(0.05)
    raise AssertionError(
        "only %d answers" % len([f for f in futures if f.done()])
    )


def test_a_full_queue_gets_json_503(one_thread):
    """The only thread reads a large body that stalls; of five more
    requests at most one can queue, the others get 503 at once."""
    busy = _open(
        one_thread.port,
        b"POST /v1/demo/stacks HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        b"Content-Type: application/json\r\n"
        b"Content-Length: 200000\r\n\r\n" % one_thread.port + b"{" * 40000,
    )
    url = one_thread.endpoint("demo") + "/stacks"
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        futures = [
            pool.submit(requests.get, url, timeout=TIMEOUT + 5)
            for _ in range(5)
        ]
        for future in _wait_done(futures, 3, 3):
            response = future.result()
            assert response.status_code == 503
            assert response.json()["error"]["type"] == "ServiceUnavailable"
        _reset(busy)
        for future in futures:
            assert future.result().status_code in (200, 503)
    assert requests.get(url, timeout=2).status_code == 200
    log = one_thread.log("all")
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
