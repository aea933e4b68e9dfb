"""The documentation builds with warnings as errors, as ``tox -e docs``
and ``tox -e releasenotes`` build it, so a broken page -- or a generated
reference (REST API, resource types, options, policy) that no longer
parses -- fails the suite, not only the docs job.

Sphinx and reno come from ``doc/requirements.txt`` (tox's py3 env
installs them); without them these tests skip, except under ``CI=true``.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

import heat_lite

ROOT = os.path.dirname(os.path.dirname(heat_lite.__file__))


def _need(module):
    if importlib.util.find_spec(module) is None:
        message = "%s is not installed (pip install -r doc/requirements.txt)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message % module)
        pytest.skip(message % module)


def _build(source, out):
    """sphinx-build -W on ``source``; returns (exit code, output)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-E",
            "-b",
            "html",
            "-d",
            str(out / "doctrees"),
            source,
            str(out / "html"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    return result.returncode, result.stdout + result.stderr


def test_docs_build_without_warnings(tmp_path):
    _need("sphinx")
    code, output = _build(os.path.join(ROOT, "doc", "source"), tmp_path)
    assert code == 0, output[-4000:]
    html = tmp_path / "html"
    # The generated references are there and not empty: the API from the
    # route tree, the types from the plugin registry, the options and
    # rules from oslo's extensions.
    api = (html / "reference" / "api.html").read_text()
    assert "/v1/{tenant}/stacks/{name}/{stack_id}" in api
    assert "rollouts:create" in api
    types = (html / "reference" / "resource-types.html").read_text()
    assert "OS::Heat::WaitConditionHandle" in types
    assert "OS::Nova::Server" in types
    options = (html / "configuration" / "config.html").read_text()
    assert "max_connections_per_peer" in options
    assert "max_signals_per_handle" in options
    policy = (html / "configuration" / "policy.html").read_text()
    assert "stacks:create" in policy


def test_release_notes_build_without_warnings(tmp_path):
    _need("reno")
    if not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.isfile(
        os.path.join(ROOT, ".git")
    ):
        pytest.skip("reno reads the notes from the git history")
    code, output = _build(
        os.path.join(ROOT, "releasenotes", "source"), tmp_path
    )
    assert code == 0, output[-4000:]
    notes = (tmp_path / "html" / "unreleased.html").read_text()
    assert "allowed_origins" in notes


def test_option_reference_lists_the_generator_namespaces():
    """The option reference names its namespaces itself (oslo.config's
    directive reads a generator file only relative to the working
    directory); they are the sample generator's, in its order."""
    generator = os.path.join(
        ROOT, "etc", "heat_lite", "heat_lite-config-generator.conf"
    )
    with open(generator) as f:
        wanted = [
            line.split("=", 1)[1].strip()
            for line in f
            if line.split("=", 1)[0].strip() == "namespace"
        ]
    page = os.path.join(ROOT, "doc", "source", "configuration", "config.rst")
    with open(page) as f:
        text = f.read()
    listed = []
    for line in text.split(".. show-options::", 1)[1].splitlines()[1:]:
        if line.strip() and not line.startswith(" "):
            break  # the directive's indented content has ended
        if line.strip():
            listed.append(line.strip())
    assert wanted and listed == wanted
