"""The test cloud launcher's pure parts: ports, names, configs, the venv
key. (Starting it for real is what tests/functional/test_cloud_server.py
does.)"""

import configparser
import os
import socket

import pytest

from tools.minicloud import configs, layout, processes, venv


def _layout(tmp_path, **kwargs):
    values = dict(
        dir=str(tmp_path),
        venv=str(tmp_path / "venv"),
        ports=layout.pick_ports(0),
        mysql_url="mysql+pymysql://root@127.0.0.1:3306",
        rabbit="guest:guest@127.0.0.1:5672",
        password="pw",
        prefix="mctest0001",
    )
    values.update(kwargs)
    return layout.Layout(**values)


def test_a_taken_port_is_refused():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        taken = sock.getsockname()[1]
        with pytest.raises(RuntimeError) as err:
            layout.pick_ports(taken)
    assert str(taken) in str(err.value)


def test_base_port_numbers_the_services():
    base = layout.DEFAULT_BASE_PORT
    try:
        ports = layout.pick_ports(base)
    except RuntimeError:
        pytest.skip("a test cloud is running on the default ports")
    assert ports == {
        "keystone": base,
        "glance": base + 1,
        "placement": base + 2,
        "neutron": base + 3,
        "nova": base + 4,
    }


def test_names_carry_the_run_prefix(tmp_path):
    lay = _layout(tmp_path)
    assert lay.database("nova_cell0") == "mctest0001_nova_cell0"
    assert lay.vhost == "minicloud_mctest0001"
    assert lay.transport_url.endswith("/minicloud_mctest0001")
    lay.save()
    assert layout.Layout.load(str(tmp_path)) == lay


def test_configs_point_every_service_at_its_own_database(tmp_path):
    lay = _layout(tmp_path)
    for service, name in configs._PASTE.items():
        os.makedirs(tmp_path / "venv" / "etc" / service, exist_ok=True)
        (tmp_path / "venv" / "etc" / service / name).write_text("[x]\n")
    configs.render(lay)
    nova = configparser.ConfigParser(interpolation=None)
    nova.read(lay.path("etc", "nova", "nova.conf"))
    assert nova["database"]["connection"] == lay.db_url("nova")
    assert nova["api_database"]["connection"] == lay.db_url("nova_api")
    assert nova["DEFAULT"]["compute_driver"] == "minicloud_nova.FakeDriver"
    assert nova["neutron"]["auth_url"] == lay.auth_url
    ml2 = configparser.ConfigParser()
    ml2.read(lay.path("etc", "neutron", "plugins", "ml2", "ml2_conf.ini"))
    assert ml2["ml2"]["mechanism_drivers"] == "heat_lite_bind_all"
    neutron = configparser.ConfigParser(interpolation=None)
    neutron.read(lay.path("etc", "neutron", "neutron.conf"))
    assert neutron["DEFAULT"]["service_plugins"] == "router,trunk"
    assert os.path.exists(lay.path("etc", "nova", "api-paste.ini"))


def test_the_venv_key_follows_the_pins():
    assert venv.digest() == venv.digest()
    assert venv.path("/c").startswith("/c/minicloud-venv-")
    assert len(venv.digest()) == 12


def test_stop_leaves_foreign_processes_alone(tmp_path):
    """A recorded PID now held by a process without the cloud's marker
    (the cloud died, the PID was reused) is not signalled."""
    lay = _layout(tmp_path)
    assert not processes._ours(lay, os.getpid())
