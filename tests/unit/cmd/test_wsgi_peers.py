"""How many connections one peer may hold open (``wsgi_peers``)."""

import pytest

from heat_lite.cmd import wsgi_peers


@pytest.mark.parametrize(
    "address,peer",
    [
        ("192.0.2.7", "192.0.2.7"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("", None),
        (None, None),
        ("/run/heat.sock", None),
    ],
)
def test_peer_of(address, peer):
    assert wsgi_peers.peer_of(address) == peer


def test_a_peer_gets_its_share(caplog):
    count = wsgi_peers.PeerCount(2)
    first = count.admit("192.0.2.7")
    second = count.admit("2001:db8::1")
    assert count.admit("192.0.2.7") and count.admit("2001:db8::2")
    assert count.admit("192.0.2.7") is None
    assert count.admit("2001:db8::ffff") is None  # same /64
    assert count.admit("192.0.2.8") is not None
    assert "Refusing connections from 192.0.2.7" in caplog.text
    first.release()
    first.release()  # cheroot may close a connection twice
    assert count.open_count("192.0.2.7") == 1
    assert count.admit("192.0.2.7") is not None
    assert count.admit("192.0.2.7") is None
    second.release()
    assert count.open_count("2001:db8::1") == 1


def test_no_limit():
    count = wsgi_peers.PeerCount(0)
    slots = [count.admit("192.0.2.7") for _ in range(1000)]
    assert all(slots) and count.open_count("192.0.2.7") == 0
    for slot in slots:
        slot.release()
