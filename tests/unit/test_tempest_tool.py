"""tools.tempest's pure parts: tempest.conf, the expected-failure list,
the per-module summary, the test regex, the venv key. (Running the suite
for real is ``tox -e tempest``; see doc/tempest.md.)"""

import configparser
import os
import re
import sys

import pytest

from tools.minicloud import heat_lite as heat
from tools.tempest import __main__ as cli
from tools.tempest import conf, expected, summary, venv

ID = "heat_tempest_plugin.tests.%s[id-0c7ad5bb-b4a3-4d24-9a5e-9b2d3e1f1a55]"


def _parsed(text):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser


def test_tempest_conf_points_the_plugin_at_the_cloud():
    text = conf.render(
        conf.values("http://127.0.0.1:17000/v3", "s3cret%x", build_timeout=99)
    )
    parsed = _parsed(text)
    plugin = parsed["heat_plugin"]
    assert plugin["auth_url"] == "http://127.0.0.1:17000/v3"
    assert plugin["auth_version"] == "3"
    assert (plugin["username"], plugin["project_name"]) == ("demo", "demo")
    assert plugin["admin_username"] == "admin"
    # A % in a password survives (no interpolation on either side).
    assert plugin["password"] == plugin["admin_password"] == "s3cret%x"
    assert plugin["image_ref"] == plugin["minimal_image_ref"] == "mc-image"
    assert plugin["instance_type"] == "mc-small"
    assert plugin["minimal_instance_type"] == "mc-tiny"
    assert plugin["fixed_network_name"] == "mc-net"
    assert plugin["floating_network_name"] == "public"
    assert plugin["build_timeout"] == "99"
    assert parsed["identity"]["uri_v3"] == "http://127.0.0.1:17000/v3"
    available = parsed["service_available"]
    assert available.getboolean("heat") and available.getboolean("nova")
    assert not available.getboolean("cinder")
    assert not available.getboolean("swift")


def test_expected_failures_need_a_reason():
    entries = expected.parse(
        "# a comment\n\n"
        r"tests\.scenario\.test_aodh_alarm\. # no Aodh" + "\n"
        "  test_server_signal   #  no guest  \n"
    )
    assert [(e.regex, e.reason, e.line) for e in entries] == [
        (r"tests\.scenario\.test_aodh_alarm\.", "no Aodh", 3),
        ("test_server_signal", "no guest", 4),
    ]
    assert expected.exclude_list(entries) == (
        "tests\\.scenario\\.test_aodh_alarm\\.\ntest_server_signal\n"
    )
    assert expected.reason_for(entries, ID % "x.test_server_signal.T.t") == (
        "no guest"
    )
    assert expected.reason_for(entries, ID % "x.test_other.T.t") is None
    with pytest.raises(ValueError, match="line 2: no '# reason'"):
        expected.parse("\ntest_foo\n")
    with pytest.raises(ValueError, match="line 1: no '# reason'"):
        expected.parse("test_foo #   \n")
    with pytest.raises(ValueError, match="line 1: bad regex"):
        expected.parse("test_(foo # unbalanced\n")


def test_the_shipped_list_parses_and_gives_reasons():
    entries = expected.load()
    assert entries
    assert all(e.reason for e in entries)


def test_summary_per_module():
    rows = summary.parse_csv(
        "test,status,start_time,stop_time\n"
        + ID % "functional.test_preview.StackPreviewTest.test_a"
        + ",success,,\n"
        + ID % "functional.test_preview.StackPreviewTest.test_b"
        + ",failure,,\n"
        + ID % "functional.test_hooks.HooksTest.test_c"
        + ",skip,,\n"
        + ID % "scenario.test_server_signal.T.test_d"
        + ",error,,\n"
        + "process-returncode,failure,,\n"
    )
    table, failures = summary.summarise(
        rows, lambda t: "no guest" if "server_signal" in t else None
    )
    assert table == {
        "functional.test_hooks": {"passed": 0, "failed": 0, "skipped": 1},
        "functional.test_preview": {"passed": 1, "failed": 1, "skipped": 0},
        "scenario.test_server_signal": {
            "passed": 0,
            "failed": 1,
            "skipped": 0,
        },
    }
    assert [(f["module"], f["expected"]) for f in failures] == [
        ("functional.test_preview", None),
        ("scenario.test_server_signal", "no guest"),
    ]
    assert [f["module"] for f in summary.unexpected(failures)] == [
        "functional.test_preview"
    ]
    lines = summary.format_table(table).splitlines()
    assert lines[0].split() == ["module", "passed", "failed", "skipped"]
    assert lines[-1].split() == ["total", "1", "2", "1"]


def test_suite_regex_selects_and_narrows():
    api = re.compile(cli.test_regex("api"))
    assert api.search(ID % "api.test_heat_api.stacks_x.test_request")
    assert not api.search(ID % "functional.test_preview.T.test_a")
    every = re.compile(cli.test_regex("all", "test_preview|test_hooks"))
    assert every.search(ID % "functional.test_preview.T.test_a")
    assert every.search(ID % "scenario.test_hooks.T.test_a")
    assert not every.search(ID % "functional.test_stack_tags.T.test_a")


def test_heat_config_is_keystone_mode_with_trusts():
    parsed = _parsed(
        heat.render_config(
            name="t1",
            port=8123,
            db="postgresql+psycopg2://postgres@127.0.0.1:5432/heat_lite_t1",
            transport="rabbit://guest:guest@127.0.0.1:5672/heat_lite_t1",
            auth_url="http://127.0.0.1:17000/v3",
            password="pw",
            region="RegionOne",
            key="k" * 32,
        )
    )
    assert parsed["api"]["auth_strategy"] == "keystone"
    assert parsed["api"]["bind_port"] == "8123"
    assert parsed["keystone_authtoken"]["username"] == "heat"
    assert parsed["trustee"]["username"] == "heat"
    assert parsed["DEFAULT"]["auth_encryption_key"] == "k" * 32
    assert parsed["engine"]["topic"] == "heat_lite-engine-t1"


def test_venv_key_follows_the_pins(tmp_path):
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("tempest==47.0.0\n")
    two.write_text("tempest==46.0.0\n")
    assert venv.digest(str(one)) != venv.digest(str(two))
    assert venv.digest(str(one)) == venv.digest(str(one))


def test_service_option_chooses_heat_lite_or_heat():
    assert cli._parser().parse_args(["run"]).service == "heat_lite"
    args = cli._parser().parse_args(["run", "--service", "heat"])
    assert args.service == "heat"
    with pytest.raises(SystemExit):
        cli._parser().parse_args(["run", "--service", "senlin"])


def _real_heat(tmp_path):
    # Only the config is rendered and one stand-in process spawned: no
    # Heat venv is needed (bin_dir is not read until start()).
    from tools.tempest import heat as real_heat

    return real_heat.Recorded(
        str(tmp_path / "venv" / "bin"),
        str(tmp_path / "heat"),
        auth_url="http://127.0.0.1:17000/v3",
        password="pw%1",
        stack_domain="heat",
        domain_admin="heat_domain_admin",
    )


def test_real_heat_config_is_keystone_mode_with_trusts(tmp_path):
    service = _real_heat(tmp_path)
    parsed = _parsed(
        service.render_config(
            "postgresql+psycopg2://postgres@127.0.0.1:5432/heat_x",
            "rabbit://guest:guest@127.0.0.1:5672/heat_x",
        )
    )
    default = parsed["DEFAULT"]
    assert default["deferred_auth_method"] == "trusts"
    assert default.getboolean("convergence_engine")
    assert default["num_engine_workers"] == "2"
    assert len(default["auth_encryption_key"]) == 32
    assert default["stack_user_domain_name"] == "heat"
    assert default["stack_domain_admin"] == "heat_domain_admin"
    assert default["stack_domain_admin_password"] == "pw%1"
    assert default["region_name_for_services"] == "RegionOne"
    cfn = "http://127.0.0.1:%d" % service.cfn_port
    assert default["heat_metadata_server_url"] == cfn
    waitcondition = default["heat_waitcondition_server_url"]
    assert waitcondition == cfn + "/v1/waitcondition"
    assert default["transport_url"].endswith("/heat_x")
    assert parsed["database"]["connection"].endswith("/heat_x")
    # heat-api's keystone pipeline: no noauth flavor.
    assert "flavor" not in parsed["paste_deploy"]
    assert parsed["paste_deploy"]["api_paste_config"].endswith(
        "/venv/etc/heat/api-paste.ini"
    )
    # The same keystone sections heat_lite's config has.
    authtoken = parsed["keystone_authtoken"]
    assert authtoken["auth_url"] == "http://127.0.0.1:17000/v3"
    assert (authtoken["username"], authtoken["project_name"]) == (
        "heat",
        "service",
    )
    assert authtoken["password"] == parsed["trustee"]["password"] == "pw%1"
    assert parsed["trustee"]["username"] == "heat"
    assert parsed["clients"]["endpoint_type"] == "public"
    assert parsed["clients_keystone"]["auth_uri"] == "http://127.0.0.1:17000"
    # heat-api-cfn posts EC2 signatures to <endpoint_override>/v3/ec2tokens.
    ec2 = parsed["ec2authtoken"]
    assert ec2["endpoint_override"] == "http://127.0.0.1:17000"
    assert (ec2["auth_type"], ec2["username"]) == ("password", "heat")
    # heat-api-cfn serves CFN_SIGNAL and wait condition URLs, beside
    # heat-api on a port of its own.
    os.makedirs(service.workdir)
    services = dict(service.services())
    assert list(services) == ["engine", "api", "cfn"]
    assert "127.0.0.1:%d" % service.cfn_port in services["cfn"]
    assert "127.0.0.1:%d" % service.port in services["api"]
    # Idle connections outlive tempest's 2 s between polls.
    api = services["api"]
    assert int(api[api.index("--keep-alive") + 1]) > 2


def test_real_heat_is_recorded_for_the_one_stop_path(tmp_path):
    service = _real_heat(tmp_path)
    service.backend_made(
        "database", "postgresql+psycopg2://postgres@127.0.0.1:5432/heat_db1"
    )
    # Recorded before anything runs: a crash now still drops it.
    assert heat.Heat.load(service.workdir).state["database"] == "heat_db1"
    service.backend_made("vhost", "rabbit://guest:guest@127.0.0.1:5672/vh1")
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    service.spawn("engine", sleeper)
    pid = service.procs["engine"].pid
    loaded = heat.Heat.load(service.workdir)
    assert loaded.state["pids"] == {"engine": pid}
    assert loaded.state["vhost"] == "vh1"
    # tools.tempest's stop: the recorded process group goes. (Database
    # and vhost are names only here: blank them, nothing was made.)
    loaded.state.update(database="", vhost="")
    loaded.stop()
    assert service.procs["engine"].wait(timeout=30) is not None
    assert not os.path.exists(os.path.join(service.workdir, "heat.json"))
