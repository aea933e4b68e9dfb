"""First contact: the commands as a newcomer and an operator meet them.

The README's quick start runs in a network namespace with nothing but a
loopback device (``unshare -n``, as root); the start-up failures run the
real commands with broken configs and check for one clear line on stderr,
exit code 1 and no traceback.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys

import pytest

from harness import backends, polling
from harness import deployment as deployment_mod

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)


def _namespaces_available():
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare or ip is not installed"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return "cannot make a network namespace: %s" % probe.stderr.strip()
    return None


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    """The probe's result. Its tests are marked ``alone`` (no other test
    runs on any xdist worker meanwhile): it measures the start-up, about
    1.4 s of mostly CPU on an idle machine against a 2 s bound."""
    why = _namespaces_available()
    if why:
        backends.unavailable("a network namespace", why)
    workdir = str(tmp_path_factory.mktemp("quickstart"))
    result = subprocess.run(
        [
            "unshare",
            "-n",
            sys.executable,
            "-m",
            "tests.functional.quickstart_probe",
            workdir,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.alone
def test_quickstart_serves_fast_with_no_config_and_no_network(quickstart):
    # Import, migrate a new SQLite file, start the engine and listen, with
    # an empty HOME (so stevedore also builds its entry-point cache).
    # Issue 11 promises 2 s. The wall time depends on what else the
    # machine runs (the suite runs in parallel), so what is bounded here
    # is the work a start costs: its CPU time, 1.7-1.8 s even at a load
    # of 10 runnable processes per core (2.2 s at half that load before
    # openstacksdk, taskflow and eventlet's DNS resolver stopped being
    # imported at start). The wall
    # time on an idle machine is measured by ``python -m bench --startup``
    # (doc/bench/startup.md); here it must stay under 2 s unless the
    # machine is busier than one runnable process per core. The CPU time
    # too grows once the cores are shared by more than two runnable
    # processes each (caches, the other hyperthread): 2.96 s at a load of
    # 3.7 per core (two test suites at once on two cores, stop 22's CI).
    # What imports at start is pinned exactly by test_startup_imports.
    assert quickstart["startup_seconds"] is not None, quickstart["log"]
    cpu_bound = 2.0 if quickstart["load_per_core"] < 2.0 else 3.5
    assert quickstart["startup_cpu_seconds"] < cpu_bound, quickstart
    if quickstart["load_per_core"] < 1.0:
        assert quickstart["startup_seconds"] < 2.0, quickstart
    assert "Traceback" not in quickstart["log"]
    assert "ERROR" not in quickstart["log"]


@pytest.mark.alone
def test_quickstart_creates_a_stack_with_the_openstack_cli(quickstart):
    create = quickstart["create"]
    assert create["rc"] == 0, create["err"]
    # --wait prints the events, then the stack as JSON.
    document = json.loads(create["out"][create["out"].index("\n{") + 1 :])
    assert document["stack_status"] == "CREATE_COMPLETE"
    show = json.loads(quickstart["show"]["out"])
    assert show["stack_status"] == "CREATE_COMPLETE"
    assert len(show["outputs"][0]["output_value"]) == 32


@pytest.mark.alone
def test_quickstart_opens_no_connection_but_its_own_port(quickstart):
    assert quickstart["broker_connections"] == 0
    for local, remote, state in quickstart["sockets"]:
        # 0A is LISTEN; anything else must be a client of our port.
        assert local == 8004, (local, remote, state)


@pytest.mark.alone
def test_two_embedded_services_never_share_a_database(quickstart):
    second = quickstart["second_same_home"]
    assert second["rc"] == 1
    lines = [line for line in second["output"].splitlines() if line]
    assert len(lines) == 1, second["output"]
    assert "in use by another heat-lite-all" in lines[0]
    other = quickstart["other_home"]
    assert other["rc"] == 0, other["err"]
    assert json.loads(other["out"]) == []


# Start-up failures ----------------------------------------------------------


def _run(binary, tmp_path, config=None, *args):
    argv = [deployment_mod.command(binary)]
    if config is not None:
        path = tmp_path / "test.conf"
        path.write_text(config)
        argv += ["--config-file", str(path)]
    env = dict(os.environ, HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
    # A deadline for a command that must exit by itself: as long as a
    # start may take on two cores shared by parallel test workers.
    return subprocess.run(
        [*argv, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=deployment_mod.Deployment.MANAGE_TIMEOUT,
    )


def _one_clean_line(result, *words):
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "binary",
    ["heat-lite-all", "heat-lite-api", "heat-lite-engine", "heat-lite-manage"],
)
def test_missing_config_file(binary, tmp_path):
    command = ["db", "version"] if binary == "heat-lite-manage" else []
    result = _run(
        binary,
        tmp_path,
        None,
        "--config-file",
        str(tmp_path / "nowhere.conf"),
        *command,
    )
    _one_clean_line(result, "nowhere.conf")


@pytest.mark.parametrize("binary", ["heat-lite-api", "heat-lite-engine"])
def test_api_and_engine_need_a_broker(binary, tmp_path):
    _one_clean_line(_run(binary, tmp_path), "transport_url")


@pytest.mark.parametrize("binary", ["heat-lite-api", "heat-lite-engine"])
def test_unreachable_broker(binary, tmp_path):
    port = deployment_mod.free_port()
    line = _one_clean_line(
        _run(
            binary,
            tmp_path,
            (
                "[DEFAULT]\ntransport_url = rabbit://guest:s3cr3t-pw@127.0.0.1:%d/\n"
                % port
            ),
        ),
        "message broker",
        "127.0.0.1:%d" % port,
    )
    assert "s3cr3t-pw" not in line


def test_unreachable_database_for_the_engine(tmp_path):
    transport, drop = backends.create_vhost()
    port = deployment_mod.free_port()
    try:
        line = _one_clean_line(
            _run(
                "heat-lite-engine",
                tmp_path,
                (
                    "[DEFAULT]\ntransport_url = %s\n[database]\nconnection = "
                    "postgresql+psycopg2://heat:s3cr3t-pw@127.0.0.1:%d/heat\n"
                    % (transport, port)
                ),
            ),
            "database",
            "127.0.0.1:%d" % port,
        )
    finally:
        drop()
    assert "s3cr3t-pw" not in line


# Makes the import of a database driver fail as on a host where it was
# never installed: the driver is in this venv (the tests need it), so the
# command gets a sitecustomize that refuses to import it.
_HIDE_DRIVER = """\
import sys


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == %r:
            raise ModuleNotFoundError("No module named %%r" %% name, name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
"""


@pytest.mark.parametrize(
    "url, module, extra",
    [
        (
            "postgresql+psycopg2://heat:s3cr3t-pw@127.0.0.1:%d/heat",
            "psycopg2",
            "postgresql",
        ),
        (
            "mysql+pymysql://heat:s3cr3t-pw@127.0.0.1:%d/heat",
            "pymysql",
            "mysql",
        ),
    ],
)
@pytest.mark.parametrize("binary", ["heat-lite-all", "heat-lite-manage"])
def test_missing_database_driver_names_the_extra(
    binary, url, module, extra, tmp_path
):
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(_HIDE_DRIVER % module)
    config = tmp_path / "test.conf"
    config.write_text(
        "[database]\nconnection = %s\n[api]\nbind_port = %d\n"
        % (url % deployment_mod.free_port(), deployment_mod.free_port())
    )
    command = ["db", "sync"] if binary == "heat-lite-manage" else []
    result = subprocess.run(
        [deployment_mod.command(binary), "--config-file", str(config)]
        + command,
        capture_output=True,
        text=True,
        env=dict(
            os.environ,
            HOME=str(tmp_path),
            XDG_DATA_HOME=str(tmp_path),
            PYTHONPATH=str(hide),
        ),
        timeout=deployment_mod.Deployment.MANAGE_TIMEOUT,
    )
    line = _one_clean_line(result, module, "pip install '.[%s]'" % extra)
    assert "s3cr3t-pw" not in line


@pytest.mark.parametrize("binary", ["heat-lite-all", "heat-lite-api"])
def test_port_already_in_use(binary, tmp_path):
    transport, drop = ("fake://", lambda: None)
    if binary == "heat-lite-api":
        transport, drop = backends.create_vhost()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        try:
            result = _run(
                binary,
                tmp_path,
                (
                    "[DEFAULT]\ntransport_url = %s\n[api]\nbind_port = %d\n"
                    % (transport, port)
                ),
            )
        finally:
            drop()
    _one_clean_line(result, "127.0.0.1:%d" % port, "in use")


def test_noauth_refuses_a_public_address(tmp_path):
    result = _run(
        "heat-lite-all",
        tmp_path,
        "[api]\nbind_host = 0.0.0.0\nbind_port = %d\n"
        % deployment_mod.free_port(),
    )
    _one_clean_line(result, "noauth", "0.0.0.0")


def test_db_version_never_creates_a_database(tmp_path):
    result = _run("heat-lite-manage", tmp_path, None, "db", "version")
    assert result.returncode == 1
    assert "no database at" in result.stderr
    assert not (tmp_path / "heat_lite" / "heat_lite.sqlite").exists()
    assert (
        _run("heat-lite-manage", tmp_path, None, "db", "sync").returncode == 0
    )
    result = _run("heat-lite-manage", tmp_path, None, "db", "version")
    assert result.returncode == 0
    assert result.stdout.strip()


def test_log_file_and_debug_come_from_oslo_log(tmp_path):
    """Operators point logs at a file (oslo.log's options, --debug among
    them) and see the start-up there."""
    port = deployment_mod.free_port()
    log_file = tmp_path / "heat-lite.log"
    conf = tmp_path / "log.conf"
    conf.write_text(
        "[DEFAULT]\nlog_file = %s\n[api]\nbind_port = %d\n" % (log_file, port)
    )
    proc = subprocess.Popen(
        [
            deployment_mod.command("heat-lite-all"),
            "--config-file",
            str(conf),
            "--debug",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path)),
        start_new_session=True,
    )
    try:
        polling.awhile(
            lambda: (
                log_file.exists() and "resource types" in log_file.read_text()
            ),
            30,
        )
        text = log_file.read_text()
        assert " INFO heat_lite.engine.process " in text
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=30)
