"""An engine process imports openstacksdk at start, on a thread of its own,
when it will act in a cloud (``client.Cloud.warm_up``), so that its first
cloud action does not pay the import; a process that never acts in a
cloud (the quick start's noauth ``heat-lite-all``) still never imports it.
Each case runs in a fresh interpreter: this one has imported it already."""

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, sys, threading
from heat_lite.cmd import common
common.parse_args([])
from heat_lite import conf
for group, name, value in json.loads(sys.argv[1]):
    conf.CONF.set_override(name, value, group=group)
from heat_lite.engine import cloud
assert "openstack" not in sys.modules
cloud.side().warm_up()
for thread in threading.enumerate():
    if thread.name == "heat-lite-sdk-import":
        thread.join(60)
print(json.dumps([
    m in sys.modules
    for m in ("openstack", "openstack.compute.v2._proxy")
]))
"""


def _imported(tmp_path, overrides):
    env = dict(os.environ, HOME=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(overrides)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=120,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize(
    "overrides",
    [
        [["api", "auth_strategy", "keystone"]],
        [["openstack", "cloud", "mycloud"]],
    ],
    ids=["keystone mode", "a configured cloud"],
)
def test_a_process_that_acts_in_a_cloud_imports_openstacksdk_at_start(
    tmp_path, overrides
):
    assert _imported(tmp_path, overrides) == [True, True]


def test_a_process_without_a_cloud_never_imports_it(tmp_path):
    assert _imported(tmp_path, []) == [False, False]
