"""The pairing of old and new ``networks`` entries of a server (pure)."""

from heat_lite.resources.openstack import server_nets_match as nm


def _iface(port, ip, net="N", subnet="S"):
    return {"port": port, "network": net, "fixed_ip": ip, "subnet": subnet}


IFACES = [_iface("p0", "11.0.0.3"), _iface("p1", "11.0.0.33")]


def test_a_subnet_or_the_port_or_its_ip_keeps_the_port_of_a_network():
    old = [{"network": "N"}]
    for new in (
        {"network": "N", "subnet": "S"},  # the subnet found from it
        {"port": "p0"},
        {"network": "N", "fixed_ip": "11.0.0.3"},
    ):
        assert nm.match(old, [new], IFACES[:1]) == (["p0"], [], [])


def test_another_subnet_detaches_then_attaches():
    old = [{"network": "N", "subnet": "S"}]
    new = [{"network": "N", "subnet": "T"}]
    assert nm.match(old, new, IFACES[:1]) == ([None], ["p0"], [0])


def test_a_changed_tag_is_a_new_interface():
    old = [{"network": "N"}]
    new = [{"network": "N", "tag": "t"}]
    assert nm.match(old, new, IFACES[:1]) == ([None], ["p0"], [0])


def test_the_specific_entries_are_paired_first():
    # Listed first, the vague entry would take p0 otherwise.
    old = [{"network": "N"}, {"network": "N", "fixed_ip": "11.0.0.3"}]
    ifaces = [_iface("p0", "11.0.0.3"), _iface("p1", "11.0.0.4")]
    kept, detach, attach = nm.match(old, [old[1]], ifaces)
    assert (kept, detach, attach) == (["p0"], ["p1"], [])


def test_reordered_entries_keep_every_port():
    old = [
        {"network": "N"},
        {"network": "N", "fixed_ip": "11.0.0.33"},
        {"network": "N", "subnet": "S"},
    ]
    new = [old[2], {"network": "N"}, {"network": "N", "subnet": "S"}]
    ifaces = IFACES + [_iface("p2", "11.0.0.4")]
    kept, detach, attach = nm.match(old, new, ifaces)
    assert sorted(kept) == ["p0", "p1", "p2"]
    assert (detach, attach) == ([], [])


def test_an_entry_without_an_interface_is_not_detached():
    old = [{"network": "X"}]
    assert nm.match(old, [{"network": "N"}], IFACES[:1]) == ([None], [], [0])
