"""Hostile input gets a 4xx, on every part of a request: YAML aliases,
non-data tags, deep nesting, non-UTF-8 bodies and size limits counted in
bytes, in the template, the environment, environment files and nested
template files; a browser's Accept header gets JSON. None of it leaves an
ERROR line or a traceback in the logs."""

import json
import os
import uuid

import pytest
import requests

from harness import helpers

# The API refuses all of this before any SQL runs: SQLite (all in one
# process) and PostgreSQL (API and engines apart, over RabbitMQ) cover
# both shapes; MariaDB would only repeat PostgreSQL's run.
pytestmark = pytest.mark.parametrize(
    "deployment", ["sqlite", "postgresql"], indirect=True
)

HOT = "heat_template_version: 2018-08-31\n"
EMPTY = HOT + "resources: {}\n"
NESTED = HOT + "resources:\n  n: {type: nested.yaml}\n"


def _log_sizes(deployment):
    return {
        key: os.path.getsize(os.path.join(deployment.workdir, "%s.log" % key))
        for key in deployment.procs
    }


@pytest.fixture(autouse=True)
def clean_logs(deployment):
    """No ERROR line and no traceback logged while the test ran."""
    before = _log_sizes(deployment)
    yield
    for key, offset in before.items():
        with open(
            os.path.join(deployment.workdir, "%s.log" % key), errors="replace"
        ) as f:
            f.seek(offset)
            added = f.read()
        assert "Traceback" not in added, added[-4000:]
        assert " ERROR " not in added, added[-4000:]


@pytest.fixture
def url(deployment):
    return deployment.endpoint("input-%s" % uuid.uuid4().hex[:6])


def _post(url, body, path="/stacks"):
    return requests.post(url + path, json=body, timeout=30)


def _stack(template, **extra):
    return dict(
        {"stack_name": "s%s" % uuid.uuid4().hex[:8], "template": template},
        **extra,
    )


def _refused(response, code=400, text=None):
    assert response.status_code == code, response.text
    error = response.json()["error"]
    if text:
        assert text in error["message"], error
    return error


BAD_DOCS = {
    "alias": ("a: &x [1, 2]\nb: *x\n", "aliases are not allowed"),
    "binary": ("a: !!binary aGVsbG8=\n", "binary"),
    "set": ("a: !!set {x, y}\n", "set"),
    "python": ("a: !!python/name:os.system\n", "python"),
    "deep": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested"),
}


@pytest.mark.parametrize("kind", sorted(BAD_DOCS))
def test_every_document_is_read_the_same_way(deployment, url, kind):
    doc, text = BAD_DOCS[kind]
    # Where each document goes: a template text, an environment text,
    # an environment file and a nested template file.
    tmpl_doc = EMPTY + doc.replace("a:", "description:").replace(
        "\nb:", "\nparameter_groups:"
    )
    env_doc = doc.replace("a:", "parameter_defaults:\n  p:", 1).replace(
        "\nb:", "\nparameters:"
    )
    bodies = {
        "template": _stack(tmpl_doc),
        "environment": _stack(EMPTY, environment=env_doc),
        "environment_files": _stack(
            EMPTY, environment_files=["e.yaml"], files={"e.yaml": env_doc}
        ),
        "nested": _stack(NESTED, files={"nested.yaml": tmpl_doc}),
    }
    for where, body in bodies.items():
        for path in ("/stacks", "/validate", "/stacks/preview"):
            sent = (
                dict(body)
                if path != "/validate"
                else {k: v for k, v in body.items() if k != "stack_name"}
            )
            error = _refused(_post(url, sent, path))
            assert text in error["message"].lower() or kind == "deep", (
                where,
                path,
                error,
            )
    assert requests.get(url + "/stacks").json()["stacks"] == []


def test_deep_json_bodies(deployment, url):
    deep = '{"a": ' * 10000 + "1" + "}" * 10000
    for path in ("/stacks", "/validate", "/stacks/preview"):
        response = requests.post(
            url + path,
            data=deep,
            timeout=30,
            headers={"Content-Type": "application/json"},
        )
        _refused(response, text="nested")
    _refused(_post(url, _stack(deep)), text="nested")
    _refused(
        _post(url, _stack(json.loads('{"a": ' * 150 + "1" + "}" * 150))),
        text="nested",
    )


def test_non_utf8_bodies(deployment, url):
    for raw in (
        b'{"stack_name": "\xff\xfe", "template": {}}',
        b"\xff\xfe{\x00}\x00",
        b"\x80" * 100,
    ):
        response = requests.post(
            url + "/stacks",
            data=raw,
            timeout=30,
            headers={"Content-Type": "application/json"},
        )
        _refused(response)


def test_sizes_are_counted_in_bytes(deployment, url):
    # 300,000 characters that take 600,000 bytes: over the 512 KiB
    # template limit, under the 1 MiB body limit.
    wide = EMPTY + "description: " + "\u00e9" * 300000 + "\n"
    body = json.dumps(_stack(wide), ensure_ascii=False).encode()
    assert len(body) < 1048576
    response = requests.post(
        url + "/stacks",
        data=body,
        timeout=30,
        headers={"Content-Type": "application/json"},
    )
    _refused(response, text="exceeds maximum allowed size")
    nested = json.dumps(
        _stack(NESTED, files={"nested.yaml": wide}), ensure_ascii=False
    ).encode()
    response = requests.post(
        url + "/stacks",
        data=nested,
        timeout=30,
        headers={"Content-Type": "application/json"},
    )
    _refused(response, text="exceeds maximum allowed size")


def test_body_limit_holds_without_content_length(deployment, url):
    def chunks():
        yield b'{"stack_name": "big", "template": "'
        for _ in range(80):
            yield b"x" * 16384
        yield b'"}'

    response = requests.post(
        url + "/stacks",
        data=chunks(),
        timeout=30,
        headers={"Content-Type": "application/json"},
    )
    _refused(response, 413)
    assert requests.get(url + "/stacks").status_code == 200


def test_timestamps_in_nested_templates_are_strings(deployment, url):
    nested = (
        HOT + "parameters:\n  day: {type: string, default: "
        "2020-01-31}\nresources: {}\noutputs:\n  day: {value: "
        "{get_param: day}}\n"
    )
    parent = NESTED + "outputs:\n  day: {value: {get_attr: [n, day]}}\n"
    response = _post(url, _stack(parent, files={"nested.yaml": nested}))
    assert response.status_code == 201, response.text
    stack_id = response.json()["stack"]["id"]
    heat = deployment.client(url.rsplit("/", 1)[1])
    stack = helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    assert (
        heat.stacks.output_show(stack.id, "day")["output"]["output_value"]
        == "2020-01-31"
    )


def test_browser_accept_gets_json(deployment, url):
    html = {"Accept": "text/html,application/xhtml+xml;q=0.9"}
    for path in ("/stacks", "/stacks/nope", "/no/such/path"):
        response = requests.get(url + path, headers=html, timeout=30)
        assert response.status_code in (200, 302, 404, 406)
        assert response.headers["Content-Type"].startswith("application/json")
        response.json()


def test_signal_bodies(deployment, url):
    tmpl = helpers.template({"h": {"type": "OS::Heat::WaitConditionHandle"}})
    response = _post(url, _stack(tmpl))
    assert response.status_code == 201, response.text
    stack = response.json()["stack"]
    heat = deployment.client(url.rsplit("/", 1)[1])
    helpers.wait_for_status(heat, stack["id"], "CREATE_COMPLETE")
    signal = "%s/stacks/%s/%s/resources/h/signal" % (
        url,
        heat.stacks.get(stack["id"]).stack_name,
        stack["id"],
    )
    headers = {"Content-Type": "application/json"}
    for raw in ('{"a": ' * 10000 + "1" + "}" * 10000, b'"\xff"', "[1"):
        response = requests.post(signal, data=raw, headers=headers, timeout=30)
        _refused(response)
    # Within max_json_body_size, beyond max_signal_size (issue 26): a
    # handle stores no signal of 900 KB.
    big = {"status": "SUCCESS", "data": "x" * 900000}
    error = _refused(
        requests.post(signal, json=big, timeout=30),
        413,
        "a signal of 900030 bytes, more than max_signal_size (8192)",
    )
    assert error["type"] == "SignalTooLarge"
    response = requests.post(signal, json={"status": "SUCCESS"}, timeout=30)
    assert response.status_code == 200, response.text
    assert list(heat.resources.metadata(stack["id"], "h")) == ["1"]
