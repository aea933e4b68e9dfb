"""A third-party plugin package, installed with pip, works end to end.

``examples/heat_lite_example_plugin`` is installed with pip, as an
operator would install a plugin, but into a directory of its own
(``pip install --target``) that the processes of one fresh SQLite
deployment have on their ``PYTHONPATH``: the tests that run meanwhile on
other xdist workers, from the same venv, never see the plugin appear or
go. That deployment loads its entry point (from the installed
``dist-info``, as from site-packages), and a stack uses its
``Example::Counter`` type: attributes, in-place update, replacement, an
immutable property, check and delete, all visible in the counter files
it writes.
"""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest
import setuptools

from harness import deployment as deployment_mod
from harness import helpers

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
EXAMPLE = os.path.join(ROOT, "examples", "heat_lite_example_plugin")
DIST = "heat-lite-example-plugin"


def _pip(*args):
    result = subprocess.run(
        [sys.executable, "-m", "pip", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, "pip %s failed:\n%s%s" % (
        " ".join(args),
        result.stdout,
        result.stderr,
    )


def _can_build_here():
    """True if setuptools can build a wheel without fetching anything:
    it needs ``wheel`` before setuptools 70.1."""
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec(
        "wheel"
    ) is not None


@pytest.fixture(scope="module")
def plugin_deployment(tmp_path_factory):
    # Build from a copy: pip builds in the source tree and would leave
    # build/ and egg-info behind in the checkout.
    source = tmp_path_factory.mktemp("plugin-src") / "example"
    shutil.copytree(EXAMPLE, source)
    target = tmp_path_factory.mktemp("plugin-site")
    args = ["install", "--no-deps", "--quiet", "--target", str(target)]
    if _can_build_here():
        args.append("--no-build-isolation")
    _pip(*args, str(source))
    assert any(
        name.startswith(DIST.replace("-", "_")) and name.endswith(".dist-info")
        for name in os.listdir(target)
    ), os.listdir(target)
    # Plugins are loaded when a process starts: start after install.
    yield from deployment_mod.running(
        "sqlite",
        tmp_path_factory.mktemp("plugin-sqlite"),
        env={
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(target), os.environ.get("PYTHONPATH")])
            )
        },
    )


def _counter(directory, **props):
    return helpers.template(
        {
            "hits": {
                "type": "Example::Counter",
                "properties": dict(directory=str(directory), **props),
            }
        },
        outputs={
            name: {"value": {"get_attr": ["hits", name]}}
            for name in ("value", "updates", "path")
        },
    )


def _outputs(heat, stack_id):
    return {
        o["output_key"]: o.get("output_value")
        for o in heat.stacks.get(stack_id).outputs
    }


def _read(path):
    with open(path) as f:
        return int(f.read())


def test_example_plugin_type_in_a_stack(plugin_deployment, tmp_path):
    heat = plugin_deployment.client()
    schema = heat.resource_types.get("Example::Counter")
    assert schema["properties"]["start"]["update_allowed"] is True
    assert schema["properties"]["owner"]["immutable"] is True
    assert "value" in schema["attributes"]

    first_dir, second_dir = tmp_path / "one", tmp_path / "two"
    first_dir.mkdir()
    second_dir.mkdir()
    stack_id = helpers.create(
        heat, "counters", _counter(first_dir, start=5, step=2, ready_after=0.5)
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    out = _outputs(heat, stack_id)
    physical = heat.resources.get(stack_id, "hits").physical_resource_id
    assert out == {"value": 5, "updates": 0, "path": str(first_dir / physical)}
    assert _read(out["path"]) == 5

    # step: in place, the counter advances; start raised: set in place.
    for props, value, updates in (
        ({"start": 5, "step": 3}, 8, 1),
        ({"start": 20, "step": 3}, 20, 2),
    ):
        heat.stacks.update(stack_id, template=_counter(first_dir, **props))
        helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
        out = _outputs(heat, stack_id)
        assert (out["value"], out["updates"]) == (value, updates)
        assert _read(out["path"]) == value
        assert (
            heat.resources.get(stack_id, "hits").physical_resource_id
            == physical
        )

    heat.actions.check(stack_id)
    helpers.wait_for_status(heat, stack_id, "CHECK_COMPLETE")

    # A new directory (not update_allowed) and a lower start (the
    # plugin's needs_replace) both make a new counter.
    for directory, start in ((second_dir, 20), (second_dir, 1)):
        heat.stacks.update(stack_id, template=_counter(directory, start=start))
        helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE")
        new = heat.resources.get(stack_id, "hits").physical_resource_id
        assert new != physical
        assert not os.path.exists(first_dir / physical)
        assert not os.path.exists(second_dir / physical)
        assert _read(second_dir / new) == start
        assert _outputs(heat, stack_id)["updates"] == 0
        physical = new

    heat.stacks.update(
        stack_id, template=_counter(second_dir, start=1, owner="someone")
    )
    failed = helpers.wait_for_status(heat, stack_id, "UPDATE_FAILED")
    assert "owner" in failed.stack_status_reason
    assert _read(second_dir / physical) == 1

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE")
    assert os.listdir(first_dir) == [] and os.listdir(second_dir) == []
