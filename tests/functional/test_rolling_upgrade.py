"""A rolling upgrade on one bus and one database: engines of the previous
release and of this one side by side (issue 33 item 4).

The previous release's code is taken from this repository's history
(``git archive``) and run from its own directory on the same Python and
libraries; the database is migrated by this release first (expand), and
this release's API and engines are pinned with ``[upgrade_levels]`` to
what the old engines serve. Then, with stacks of TestResources created
and updated throughout:

1. both engines work together;
2. the new engine stops: the old one alone converges an update the
   pinned API started (the old code on the new schema), and a call the
   old engines do not know is refused with 409 before it is sent;
3. a new engine starts and the old one is stopped gracefully in the
   middle of an update: the new one finishes it;
4. the pins are removed and the API restarted: the new calls work.

Every stack converges, and the TestResource ledger shows nothing leaked,
created twice or deleted twice.
"""

import os
import signal
import subprocess
import sys
import tarfile

import pytest

from harness import deployment as deployment_mod
from harness import helpers, polling
from tests.resources_ledger import assert_no_leaks, assert_one_each

pytestmark = [pytest.mark.functional, pytest.mark.timeout(900)]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
# The previous release: the last commit CI landed before this test came
# (RPC 1.15, worker 1.1, migrations up to 0020). Move it forward when a
# release is tagged.
PREVIOUS = "b51d267"
PINS = "\n[upgrade_levels]\nengine = 1.15\nworker = 1.1\n"
TR = "OS::Heat::TestResource"
# heat-lite-engine of the code on PYTHONPATH (the previous release's:
# sys.path puts it before this checkout's editable install, once the
# working directory, which ``-c`` puts first, is taken out).
OLD_ENGINE = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "import heat_lite; "
    "print('heat_lite from', heat_lite.__file__, flush=True); "
    "from heat_lite.cmd.engine import main; "
    "sys.argv[0] = 'heat-lite-engine'; sys.exit(main())"
)


def _previous_release(where):
    """The previous release's ``heat_lite`` package, extracted under
    ``where``; the directory to put on PYTHONPATH."""
    try:
        archive = subprocess.run(
            ["git", "-C", ROOT, "archive", PREVIOUS, "heat_lite"],
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip("no git history with %s here: %s" % (PREVIOUS, exc))
    path = where / "previous"
    path.mkdir()
    archive_file = where / "previous.tar"
    archive_file.write_bytes(archive)
    with tarfile.open(archive_file) as tar:
        tar.extractall(path, filter="data")
    return str(path)


def _template(value, wait=0):
    resources = {}
    for layer in range(3):
        for i in range(3):
            res = {
                "type": TR,
                "properties": {"value": value, "wait_secs": wait},
            }
            if layer:
                res["depends_on"] = [
                    "l%dr%d" % (layer - 1, j) for j in range(3)
                ]
            resources["l%dr%d" % (layer, i)] = res
    return helpers.template(resources)


def _update_all(heat, stack_ids, value, wait=0):
    for stack_id in stack_ids:
        heat.stacks.update(stack_id, template=_template(value, wait))
    for stack_id in stack_ids:
        helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=300)


def _stop(dep, key):
    proc = dep.procs.pop(key)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=60)


def _values(heat, stack_id):
    return {
        r.resource_name: heat.resources.get(
            stack_id, r.resource_name
        ).attributes["output"]
        for r in heat.resources.list(stack_id)
    }


def test_engines_of_two_releases_then_only_the_new_one(tmp_path):
    old_code = _previous_release(tmp_path)
    dep = deployment_mod.Deployment(
        "postgresql", tmp_path / "dep", engine_workers=1, extra_conf=PINS
    )
    os.makedirs(dep.workdir)
    dep.start()
    try:
        dep.spawn(
            "old_engine",
            [
                sys.executable,
                "-c",
                OLD_ENGINE,
                "--config-file",
                dep.config,
                "--workers",
                "1",
            ],
            env=dict(dep.env(), PYTHONPATH=old_code),
        )
        polling.until(
            lambda: dep.engines_up() >= 2,
            180,
            lambda: "the old engine up:\n%s" % dep.log("old_engine"),
        )
        assert "heat_lite from %s" % old_code in dep.log("old_engine")
        heat = dep.client()

        # 1. Both releases' engines work the same stacks.
        stack_ids = [
            helpers.create(heat, "up%d" % i, _template("a")) for i in range(3)
        ]
        for stack_id in stack_ids:
            helpers.wait_for_status(
                heat, stack_id, "CREATE_COMPLETE", timeout=300
            )
        _update_all(heat, stack_ids, "b")

        # 2. The old engine alone: it converges what the pinned API asks.
        _stop(dep, "engine")
        polling.until(lambda: dep.engines_up() == 1, 60, "one engine left")
        _update_all(heat, stack_ids, "c")
        assert all(set(_values(heat, s).values()) == {"c"} for s in stack_ids)
        traversals = "/stacks/up0/%s/traversals" % stack_ids[0]
        refused = helpers.http_error(lambda: heat.http_client.get(traversals))
        assert refused.code == 409, refused
        assert "upgrade_levels" in str(refused)

        # 3. A new engine; the old one stops gracefully mid-update.
        dep._spawn("engine", "heat-lite-engine", "--workers", "1")
        polling.until(lambda: dep.engines_up() >= 2, 180, "the new engine up")
        for stack_id in stack_ids:
            heat.stacks.update(stack_id, template=_template("d", wait=1))
        polling.until(
            lambda: any(
                heat.stacks.get(s).stack_status == "UPDATE_IN_PROGRESS"
                for s in stack_ids
            ),
            60,
            "an update under way",
        )
        _stop(dep, "old_engine")
        for stack_id in stack_ids:
            helpers.wait_for_status(
                heat, stack_id, "UPDATE_COMPLETE", timeout=300
            )
        assert all(set(_values(heat, s).values()) == {"d"} for s in stack_ids)

        # 4. Every engine is new: unpin and restart the API.
        with open(dep.config) as f:
            text = f.read()
        with open(dep.config, "w") as f:
            f.write(text.replace(PINS, "\n"))
        _stop(dep, "api")
        dep._spawn("api", "heat-lite-api")
        dep._wait_for_api()
        answer = heat.http_client.get(traversals)
        assert answer.status_code == 200
        _update_all(heat, stack_ids, "e")

        assert_one_each(dep, heat, stack_ids)
        for stack_id in stack_ids:
            heat.stacks.delete(stack_id)
        for stack_id in stack_ids:
            helpers.wait_for_status(
                heat, stack_id, "DELETE_COMPLETE", timeout=300
            )
        assert_no_leaks(dep)
    finally:
        dep.stop()
