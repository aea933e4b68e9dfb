"""Fuzzing templates, environments and files together against a real
all-in-one deployment (hypothesis): every answer is below 500, every
rejected request leaves the database as it was, and the service keeps
answering. Bounded to about a minute."""

import json
import sqlite3
import time

import pytest
import requests
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import deployment as deployment_mod
from harness import polling

BUDGET = 60  # seconds of fuzzing in all
TABLES = (
    "raw_template",
    "stack",
    "resource",
    "event",
    "sync_point",
    "traversal",
    "software_config",
)
HOT = "heat_template_version: 2018-08-31\n"

# Fragments a hostile or careless user puts in YAML documents.
YAML_BITS = st.sampled_from(
    [
        "&a [1, 2]",
        "*a",
        "!!binary aGVsbG8=",
        "!!set {a, b}",
        "2020-01-31",
        "!!timestamp 2020-01-31T10:00:00Z",
        "!!python/name:os.system",
        "!!omap [{a: 1}]",
        "!!pairs [[a, 1]]",
        "!custom x",
        "{a: 1, a: 2}",
        "[" * 200 + "]" * 200,
        "'\u00e9\u4e2d\U0001f600'",
        "~",
        ".nan",
        "-.inf",
        "0x1F",
        "0o17",
        "1_000",
        "yes",
        "=",
        "<<: {a: 1}",
        "? [a]\n  : b",
        '"\\x00"',
        "{get_file: nested.yaml}",
        "{get_param: p}",
        "{get_attr: [r, x]}",
        "{list_join: [',', [a, b]]}",
        "{yaql: {}}",
        "{repeat: {for_each: {x: [1, 2]}, template: x}}",
        "{str_replace: 1}",
    ]
)
KEYS = st.sampled_from(
    [
        "description",
        "parameters",
        "resources",
        "outputs",
        "conditions",
        "parameter_groups",
        "p",
        "r",
        "type",
        "properties",
        "value",
        "1",
        "null",
        "true",
        "parameter_defaults",
        "resource_registry",
        "event_sinks",
        "encrypted_param_names",
        "parameter_merge_strategies",
    ]
)
TYPES = st.sampled_from(
    [
        "OS::Heat::None",
        "OS::Heat::TestResource",
        "nested.yaml",
        "OS::Heat::ResourceGroup",
        "OS::Heat::RandomString",
        "No::Such::Type",
        "env.yaml",
        "OS::Heat::Value",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_DATA = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8) | KEYS, children, max_size=4),
    ),
    max_leaves=20,
)


@st.composite
def yaml_doc(draw, top=HOT):
    """A YAML document: a template-like skeleton with fragments in it."""
    lines = [top] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 4))):
        key = draw(KEYS)
        value = draw(YAML_BITS | TYPES | st.builds(json.dumps, JSON_DATA))
        lines.append("%s: %s\n" % (key, value))
    if draw(st.booleans()):
        count = draw(st.sampled_from([1, 2, 10**6, -1, "x"]))
        lines.append(
            "resources:\n  r:\n    type: %s\n    properties: "
            "{count: %s, resource_def: {type: OS::Heat::None}}\n"
            % (draw(TYPES), count)
        )
    return "".join(lines)


def document(top=HOT):
    return st.one_of(
        yaml_doc(top),
        JSON_DATA,
        st.builds(lambda d: yaml.safe_dump(d), JSON_DATA),
    )


@st.composite
def request_body(draw):
    body = {}
    if draw(st.integers(0, 9)):
        body["template"] = draw(document())
    if draw(st.booleans()):
        body["environment"] = draw(document(""))
    if draw(st.booleans()):
        body["files"] = {
            name: draw(yaml_doc(draw(st.sampled_from([HOT, ""]))))
            for name in draw(
                st.lists(
                    st.sampled_from(["nested.yaml", "env.yaml", "other"]),
                    max_size=3,
                    unique=True,
                )
            )
        }
    if draw(st.booleans()):
        body["environment_files"] = draw(
            st.lists(
                st.sampled_from(["env.yaml", "nested.yaml", "missing.yaml"]),
                max_size=2,
            )
        )
    if draw(st.booleans()):
        body["parameters"] = draw(JSON_DATA)
    return body


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    yield from deployment_mod.running(
        "sqlite", tmp_path_factory.mktemp("fuzz")
    )


def _fingerprint(dep):
    """Every row of the tables a request may write (the service table's
    heartbeats excepted)."""
    db = sqlite3.connect(
        "file:%s/heat_lite.sqlite?mode=ro" % dep.workdir, uri=True
    )
    try:
        return {
            t: sorted(map(repr, db.execute("SELECT * FROM %s" % t)))
            for t in TABLES
        }
    finally:
        db.close()


def _settle(dep, url, stack_id):
    def settled():
        stacks = requests.get(url + "/stacks", timeout=10).json()["stacks"]
        return all(
            not s["stack_status"].endswith("IN_PROGRESS") for s in stacks
        )

    polling.until(settled, 30, "stack %s to settle" % stack_id, 0.2)


def _base_stack(dep, url):
    """A stack to aim updates at."""
    response = requests.post(
        url + "/stacks",
        json={
            "stack_name": "base",
            "template": {
                "heat_template_version": "2018-08-31",
                "resources": {"r": {"type": "OS::Heat::None"}},
            },
        },
        timeout=30,
    )
    stack_id = response.json()["stack"]["id"]
    _settle(dep, url, stack_id)
    return "/stacks/base/%s" % stack_id


def test_fuzz_templates_environments_files(dep):
    url = dep.endpoint("fuzz")
    base = _base_stack(dep, url)
    routes = [
        ("POST", "/stacks"),
        ("POST", "/validate"),
        ("POST", "/stacks/preview"),
        ("PUT", base),
        ("PATCH", base),
        ("PUT", base + "/preview"),
    ]
    state = {
        "start": time.monotonic(),
        "runs": 0,
        "accepted": 0,
        "fingerprint": _fingerprint(dep),
    }

    @given(
        body=request_body(),
        route=st.sampled_from(routes),
    )
    @settings(
        max_examples=400,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(body, route):
        if time.monotonic() - state["start"] > BUDGET:
            return
        state["runs"] += 1
        method, path = route
        if path in ("/stacks", "/stacks/preview"):
            body = dict(body, stack_name="f%d" % state["runs"])
        response = requests.request(method, url + path, json=body, timeout=30)
        assert response.status_code < 500, (route, body, response.text)
        if response.status_code >= 400:
            payload = response.json()
            assert set(payload) >= {"code", "title", "error"}, payload
        elif method == "PATCH" or route in (routes[0], routes[3]):
            # Accepted: the engine now works on it; wait, then start over.
            state["accepted"] += 1
            _settle(dep, url, path)
            state["fingerprint"] = _fingerprint(dep)
            return
        started = time.monotonic()
        assert requests.get(url + "/stacks", timeout=5).status_code == 200
        assert time.monotonic() - started < 2
        assert _fingerprint(dep) == state["fingerprint"], body

    run()
    print("fuzz: %(runs)d requests, %(accepted)d accepted" % state)
    assert state["runs"] >= 50
    log = dep.log("all")
    assert "Traceback" not in log and " ERROR " not in log, log[-4000:]
