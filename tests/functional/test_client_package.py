"""heat-lite-client (``client/``) installs beside python-openstackclient
without the server: in a fresh virtualenv holding only what ``pip install
./client`` brings (python-openstackclient, python-heatclient and their
own dependencies), ``openstack`` lists heat_lite's commands and runs
them, and none of the server's dependencies is there.

One venv, built from pip's cache and the local indexes (about a minute
on two busy cores) and kept in the venv cache (tools/cached_venv.py)
under a digest of every file of ``client/`` and of the Python that made
it: a change to the client (its code, its pins, its entry points) makes
a new venv, an unchanged client reuses the one its source made.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tools import cached_venv

pytestmark = pytest.mark.functional
ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
COMMANDS = (
    "stack drift detect",
    "stack drift show",
    "stack plan apply",
    "stack plan create",
    "stack plan delete",
    "stack plan list",
    "stack plan show",
    "stack promote",
    "stack promotion list",
    "stack promotion rollback",
    "stack promotion show",
    "stack query",
    "stack references",
    "stack rollout cancel",
    "stack rollout create",
    "stack rollout delete",
    "stack rollout list",
    "stack rollout pause",
    "stack rollout resume",
    "stack rollout rollback",
    "stack rollout show",
    "stack semantics set",
    "stack traversal cancel",
    "stack traversal list",
    "stack verdict",
)
# What the server needs and a client must not: its database layer, its
# web framework, its RPC and workflow libraries, and the server itself.
SERVER_ONLY = (
    "heat_lite",
    "oslo_db",
    "sqlalchemy",
    "alembic",
    "pecan",
    "oslo_messaging",
    "taskflow",
    "cheroot",
)


def _run(*argv, **kwargs):
    result = subprocess.run(
        argv, capture_output=True, text=True, timeout=600, **kwargs
    )
    assert result.returncode == 0, "%s -> %d\n%s%s" % (
        " ".join(argv),
        result.returncode,
        result.stdout,
        result.stderr[-4000:],
    )
    return result.stdout


def _client_files(tmp_path):
    """Copy ``client/`` without build leftovers (pip builds in the source
    tree and would leave build/ and egg-info behind in the checkout);
    return the copy and the paths of its files, sorted."""
    source = tmp_path / "client"
    shutil.copytree(
        os.path.join(ROOT, "client"),
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    files = sorted(
        os.path.join(top, name)
        for top, _dirs, names in os.walk(source)
        for name in names
    )
    return source, files


def _client_venv(tmp_path):
    source, files = _client_files(tmp_path)
    python = tmp_path / "python-version"
    python.write_text(sys.version)
    digest = cached_venv.file_digest(str(python), *files, root=str(tmp_path))
    venv = os.path.join(cached_venv.CACHE, "client-venv-%s" % digest)
    cached_venv.ensure(venv, [str(source)], "heat-lite-client", timeout=600)
    return venv


def test_the_client_installs_and_runs_without_the_server(tmp_path):
    bin_dir = pathlib.Path(_client_venv(tmp_path), "bin")

    # Not importable from the client's venv (its own site-packages only:
    # no PYTHONPATH, the test's working directory elsewhere).
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
    }
    missing = _run(
        str(bin_dir / "python"),
        "-c",
        "import importlib.util, sys;"
        "print(' '.join(m for m in sys.argv[1:]"
        " if importlib.util.find_spec(m) is None))",
        *SERVER_ONLY,
        env=env,
        cwd=str(tmp_path),
    )
    assert missing.split() == list(SERVER_ONLY)

    listed = _run(
        str(bin_dir / "openstack"), "help", "stack", env=env, cwd=tmp_path
    )
    found = {line.strip() for line in listed.splitlines()}
    assert set(COMMANDS) <= found, listed
    usage = _run(
        str(bin_dir / "openstack"),
        "stack",
        "rollout",
        "list",
        "--help",
        env=env,
        cwd=tmp_path,
    )
    assert usage.startswith("usage: openstack stack rollout list")
    # The hooks of heatclient's own commands load too.
    usage = _run(
        str(bin_dir / "openstack"),
        "stack",
        "update",
        "--help",
        env=env,
        cwd=tmp_path,
    )
    assert "--verify-output" in usage
