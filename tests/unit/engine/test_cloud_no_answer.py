"""An action whose attributes the cloud does not answer as it finishes.

The engine reads every attribute of a resource when its create or
update completes (to cache them for ``get_attr``), which asks the cloud
again (a server's ports). One such read meeting a reset connection must
not fail the resource: the engine polls it again (``resources.transient``)
and finishes. The reset is real: a loopback server that answers every
connection with a TCP RST, asked with requests.
"""

import socket
import struct
import threading

import pytest
import requests

from harness import polling
from heat_lite.db import api as db_api
from heat_lite.resources import test_resource
from tests.unit.engine.test_inprocess import _create, engine  # noqa: F401


@pytest.fixture
def resetting_url():
    """A loopback URL whose server resets every connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d/v2.0/ports" % listener.getsockname()[1]
    stop.set()
    listener.close()
    thread.join(5)


def test_an_unanswered_attribute_read_is_polled_again(
    engine,  # noqa: F811
    resetting_url,
    monkeypatch,
):
    real = test_resource.TestResource._resolve_attribute
    asked = []

    def resolve(plugin, name):
        if plugin.name == "reads" and name == "output":
            asked.append(name)
            if len(asked) == 1:
                requests.get(resetting_url, timeout=5)  # raises: reset
        return real(plugin, name)

    monkeypatch.setattr(
        test_resource.TestResource, "_resolve_attribute", resolve
    )
    stack_id = _create(
        engine,
        "noanswer",
        {
            "reads": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": "v"},
            }
        },
    )
    stack = polling.stack_reaches(stack_id, "CREATE_COMPLETE", timeout=20)
    assert stack["status"] == "COMPLETE"
    assert len(asked) == 2
    reasons = [
        e["resource_status_reason"] for e in db_api.event_get_all(stack_id)
    ]
    assert not [r for r in reasons if "reset" in (r or "")], reasons
