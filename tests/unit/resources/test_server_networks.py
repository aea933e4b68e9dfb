"""server_networks against a fake Neutron (a few dicts: no cloud can be
started in a unit test; tests/functional/test_cloud_server_networks.py
runs the same code against the test cloud)."""

import types

import pytest

from heat_lite.common import exception
from heat_lite.resources.openstack import server_networks


class _Network:
    """Finds by ID or name; makes ports with IDs port-0, port-1, ..."""

    def __init__(self):
        self.objects = {
            "network": {"n1": "net-1"},
            "subnet": {"s1": ("sub-1", "net-1"), "s2": ("sub-2", "net-2")},
            "security_group": {"web": "sg-1"},
            "port": {},
        }
        self.created = []

    def _find(self, kind, name, ignore_missing):
        found = self.objects[kind].get(name)
        if found is None:
            if ignore_missing:
                return None
            raise LookupError(name)
        if kind == "subnet":
            return types.SimpleNamespace(id=found[0], network_id=found[1])
        return types.SimpleNamespace(id=found)

    def __getattr__(self, name):
        kind = name.partition("find_")[2]
        return lambda n, ignore_missing: self._find(kind, n, ignore_missing)

    def create_port(self, **body):
        self.created.append(body)
        return types.SimpleNamespace(id="port-%d" % (len(self.created) - 1))


def _conn():
    return types.SimpleNamespace(network=_Network())


def test_a_subnet_entry_boots_on_a_port_made_on_its_network():
    conn, made = _conn(), []
    nics = server_networks.create_nics(
        conn,
        [{"subnet": "s1", "fixed_ip": "10.0.0.5"}, {"network": "n1"}],
        "srv",
        ["web"],
        made.append,
    )
    assert nics == [{"port": "port-0"}, {"uuid": "net-1"}]
    assert made == ["port-0"]
    assert conn.network.created == [
        {
            "network_id": "net-1",
            "name": "srv-port-0",
            "fixed_ips": [{"subnet_id": "sub-1", "ip_address": "10.0.0.5"}],
            "security_groups": ["sg-1"],
        }
    ]


def test_a_subnet_of_another_network_is_refused():
    with pytest.raises(exception.StackValidationFailed) as err:
        server_networks.resolve(_conn(), {"network": "n1", "subnet": "s2"})
    assert "does not belongs to network net-1" in str(err.value)


def test_an_old_entry_whose_subnet_is_gone_keeps_its_name():
    facts = server_networks.resolve(_conn(), {"subnet": "gone"}, strict=False)
    assert facts["subnet"] == "gone"
