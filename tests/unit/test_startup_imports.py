"""What a start imports: the quick start's time is mostly imports.

Every ``heat-lite-all`` and engine imports the API, the engine and all the
resource types (they are loaded at start so a broken plugin fails loudly).
Three heavy libraries are needed only by some processes and are imported
when first used: openstacksdk (a stack acting in a cloud), taskflow (a
rollout) and dnspython (eventlet's green DNS, which heat_lite never uses).
Without this test one module-level import brings each of them back
unseen (each is 0.2-0.3 s of CPU on every start).
"""

import json
import os
import subprocess
import sys

PROBE = """
import json, sys
from heat_lite.cmd import all, common
common.parse_args([])
from heat_lite.api import app
from heat_lite.db import migration
from heat_lite.engine import process
from heat_lite.resources import registry
app.setup_app()
registry.load()
print(json.dumps(sorted(sys.modules)))
"""


def test_a_start_does_not_import_what_it_does_not_use(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("EVENTLET_NO_GREENDNS", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=120,
        check=True,
    ).stdout
    modules = {name.split(".")[0] for name in json.loads(out)}
    assert "heat_lite" in modules
    assert "openstack" not in modules
    assert "taskflow" not in modules
    assert "dns" not in modules
