"""The polls of many servers answered by one list of the project's servers
(``heat_lite.resources.openstack.server_board``), against the test
cloud's Nova: what the board answers must be what Nova says, never a
look taken before the poller's own action, while far fewer requests are
made than one GET per server per poll.
"""

import threading
import time
import uuid

import pytest

from harness import polling
from heat_lite.resources.openstack import server_board

pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(900),
]
MAX_AGE = 0.5


@pytest.fixture
def demo(cloud):
    conn = cloud.connect("demo")
    made = []

    def create(count):
        flavor = conn.compute.find_flavor(cloud.flavor).id
        image = conn.image.find_image(cloud.image).id
        tag = uuid.uuid4().hex[:8]
        for n in range(count):
            made.append(
                conn.compute.create_server(
                    name="board-%s-%d" % (tag, n),
                    flavor_id=flavor,
                    image_id=image,
                    networks="none",
                ).id
            )
        return made[-count:]

    yield conn, create
    for server_id in made:
        conn.compute.delete_server(server_id, ignore_missing=True)
    for server_id in made:
        polling.until(
            lambda sid=server_id: conn.compute.find_server(sid) is None,
            timeout=120,
            what="server %s deleted" % server_id,
        )
    conn.close()


def _statuses(board, ids, acted):
    answers = {}
    polls = []

    def poll(server_id):
        server = board.get(server_id, acted, MAX_AGE)
        polls.append(server_id)
        answers[server_id] = None if server is None else server.status

    threads = [threading.Thread(target=poll, args=(sid,)) for sid in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers, len(polls)


def test_one_list_answers_the_polls_of_many_servers(demo):
    conn, create = demo
    ids = create(6)
    acted = time.monotonic()
    board = server_board.ServerBoard(conn)
    polls = []

    def all_active():
        answers, made = _statuses(board, ids, acted)
        polls.append(made)
        assert set(answers.values()) <= {"BUILD", "ACTIVE"}, answers
        return set(answers.values()) == {"ACTIVE"}

    polling.until(all_active, timeout=120, interval=MAX_AGE, what="active")
    polls = sum(polls)
    # Each server was read alone once; every later poll of all six came
    # from lists, at most one per poll round.
    assert board.reads == len(ids)
    assert board.lists <= polls // len(ids)
    assert board.reads + board.lists < polls

    # An action: its polls see Nova after it, never the ACTIVE of before.
    for server_id in ids:
        conn.compute.suspend_server(server_id)
    acted = time.monotonic()
    polling.until(
        lambda: set(_statuses(board, ids, acted)[0].values()) == {"SUSPENDED"},
        timeout=120,
        what="all six suspended, seen through the board",
    )
    assert board.reads == len(ids), "lists alone followed the suspension"

    for server_id in ids:
        conn.compute.delete_server(server_id)
    acted = time.monotonic()
    polling.until(
        lambda: set(_statuses(board, ids, acted)[0].values()) == {None},
        timeout=120,
        what="all six gone, seen through the board",
    )


def test_a_server_changed_before_another_was_first_seen_is_not_missed(demo):
    """The mark of a list follows the oldest look the board holds: a
    server that changed while another, newer one was read for the first
    time is still named by the next list."""
    conn, create = demo
    (first,) = create(1)
    board = server_board.ServerBoard(conn)
    polling.until(
        lambda: board.get(first, time.monotonic(), MAX_AGE).status == "ACTIVE",
        timeout=120,
        what="first server active",
    )
    conn.compute.suspend_server(first)
    polling.until(
        lambda: conn.compute.get_server(first).status == "SUSPENDED",
        timeout=120,
        what="first server suspended (seen directly)",
    )
    # A newer server, read once a few seconds later (its ``updated`` is
    # newer than the suspension of the first by more than the margin).
    later = time.time() + server_board.MARGIN + 1.5
    polling.until(lambda: time.time() > later, what="Nova's clock moved on")
    (second,) = create(1)
    board.get(second, time.monotonic(), MAX_AGE)
    reads = board.reads
    assert board.get(first, time.monotonic(), MAX_AGE).status == "SUSPENDED"
    assert board.reads == reads, "the first came from a list, not a read"


def test_a_look_gives_the_attributes_at_completion_as_openstacksdk_does(
    cloud, demo
):
    """What a server's attributes at completion read of a poll's answer
    (addresses, access IPs, instance name, tags) is read from Nova's JSON,
    as openstacksdk's Server would give it, without making that Server
    (its making was most of the CPU of a server's completion)."""
    conn, _create = demo
    server = conn.compute.create_server(
        name="board-look-%s" % uuid.uuid4().hex[:8],
        flavor_id=conn.compute.find_flavor(cloud.flavor).id,
        image_id=conn.image.find_image(cloud.image).id,
        networks=[{"uuid": conn.network.find_network(cloud.network).id}],
    )
    try:
        board = server_board.ServerBoard(conn)
        polling.until(
            lambda: (
                board.get(server.id, time.monotonic(), MAX_AGE).status
                == "ACTIVE"
            ),
            timeout=120,
            what="the server active",
        )
        look = board.get(server.id, time.monotonic() - 1, MAX_AGE)
        sdk = conn.compute.get_server(server.id)
        assert look.addresses and look.addresses == sdk.addresses
        for attr in ("access_ipv4", "access_ipv6", "instance_name", "tags"):
            assert getattr(look, attr) == getattr(sdk, attr), attr
        assert look._server is None, "an openstacksdk Server was made"
        # Anything else still comes from openstacksdk's Server.
        assert look.flavor == sdk.flavor
        assert look._server is not None
    finally:
        conn.compute.delete_server(server.id)
        polling.until(
            lambda: conn.compute.find_server(server.id) is None,
            timeout=120,
            what="the server deleted",
        )
