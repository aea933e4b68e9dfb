"""Run every template of ``corpus/``: parse, bind, resolve, compare.

Each corpus file is a YAML document with the ``template`` (and optionally
``files``, ``environment``, ``stack`` and a ``scope`` of canned resource
ids/attributes) and either ``expect`` (bound resources, resolved
properties and outputs, dependencies, parameter values and display) or
``error`` (the phase that fails, the exception type and fragments of the
message, which must include the path in the template).
"""

import glob
import os

import pytest
import yaml

from heat_lite.common import exception
from heat_lite.engine import template
from heat_lite.engine.template import functions, versions
from tests.unit.engine.template import fakes

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")
FILES = sorted(glob.glob(os.path.join(CORPUS, "*.yaml")))
STACK = {"name": "teststack", "id": "stack-id-1", "project_id": "proj-1"}


def _load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def _run(case, phase_reached):
    tmpl = template.parse(case["template"], case.get("files"))
    phase_reached.append("bind")
    bound = tmpl.bind(case.get("environment"), case.get("stack", STACK))
    phase_reached.append("resolve")
    world = case.get("scope") or {}
    scope = fakes.FakeScope(
        bound, world.get("refs"), world.get("attributes"), world.get("facade")
    )
    properties = {
        name: defn.resolve_properties(scope)
        for name, defn in bound.resources.items()
    }
    metadata = {
        name: defn.resolve_metadata(scope)
        for name, defn in bound.resources.items()
    }
    outputs = {
        name: functions.resolve(out.value, scope)
        for name, out in bound.outputs.items()
    }
    return tmpl, bound, properties, metadata, outputs


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_corpus(path):
    case = _load(path)
    error = case.get("error")
    phases = ["parse"]
    if error:
        cls = getattr(exception, error["type"])
        with pytest.raises(exception.HeatLiteException) as info:
            _run(case, phases)
        assert type(info.value) is cls, info.value
        assert phases[-1] == error["phase"], (phases, info.value)
        fragments = error["message"]
        if isinstance(fragments, str):
            fragments = [fragments]
        for fragment in fragments:
            assert fragment in str(info.value)
        return
    tmpl, bound, properties, metadata, outputs = _run(case, phases)
    _check_expect(case["expect"], tmpl, bound, properties, metadata, outputs)


def _check_expect(expect, tmpl, bound, properties, metadata, outputs):
    if "version" in expect:
        assert tmpl.version == expect["version"]
    if "resources" in expect:
        assert list(bound.resources) == expect["resources"]
    for name, value in expect.get("properties", {}).items():
        assert properties[name] == value, name
    for name, value in expect.get("metadata", {}).items():
        assert metadata[name] == value, name
    for name, value in expect.get("outputs", {}).items():
        assert outputs[name] == value, name
    for name, deps in expect.get("depends", {}).items():
        assert bound.resources[name].depends == set(deps), name
    if "order" in expect:
        order = bound.dependency_graph().topological_order()
        assert order == expect["order"]
    for name, value in expect.get("parameters", {}).items():
        assert bound.parameters[name] == value, name
    for name, value in expect.get("display", {}).items():
        assert bound.parameters_display()[name] == value, name
    for name, value in expect.get("conditions", {}).items():
        assert bound.conditions[name] is value, name
    for name, attrs in expect.get("definitions", {}).items():
        for attr, value in attrs.items():
            assert getattr(bound.resources[name], attr) == value, (name, attr)


def _function_keys(value, found):
    if isinstance(value, dict):
        if len(value) == 1:
            found.update(k for k in value if isinstance(k, str))
        for item in value.values():
            _function_keys(item, found)
    elif isinstance(value, list):
        for item in value:
            _function_keys(item, found)


def test_corpus_covers_every_version_and_function():
    assert len(FILES) >= 40
    seen_versions, seen_functions = set(), set()
    for path in FILES:
        case = _load(path)
        tmpl = case["template"]
        if isinstance(tmpl, dict) and "heat_template_version" in tmpl:
            try:
                seen_versions.add(
                    versions.normalise(tmpl["heat_template_version"])
                )
            except exception.InvalidTemplateVersion:
                pass
        _function_keys(tmpl, seen_functions)
    assert seen_versions == set(versions.VERSIONS)
    every = set(versions.ALL_FUNCTIONS)
    assert every - seen_functions == set()
