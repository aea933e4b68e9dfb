"""The OpenAPI document (``GET /v1/openapi.json``) and a schemathesis run
against an all-in-one deployment: random valid requests to every
operation, none may get a 500 or a response that breaks the document."""

import collections

import openapi_spec_validator
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, errors, given, settings
from schemathesis import GenerationMode
from schemathesis import checks as st_checks
from schemathesis.specs.openapi import checks as oas_checks

from harness import deployment as deployment_mod
from harness import helpers

CHECKS = [
    st_checks.not_a_server_error,
    oas_checks.status_code_conformance,
    oas_checks.content_type_conformance,
    oas_checks.response_schema_conformance,
]


@pytest.fixture(scope="module")
def allinone(tmp_path_factory):
    dep = deployment_mod.Deployment(
        "sqlite", tmp_path_factory.mktemp("openapi")
    )
    dep.start()
    _fuzzed_stack(dep)
    yield dep
    dep.stop()


def _fuzzed_stack(dep):
    """The stack the fuzzed requests aim at, made again when a random
    DELETE of an earlier chunk removed it (which chunk holds the DELETE
    depends on how many operations the document has)."""
    listed = requests.get(dep.endpoint("demo") + "/stacks").json()["stacks"]
    if listed:
        return listed[0]
    heat = dep.client("demo")
    stack_id = helpers.create(
        heat,
        "fuzzed",
        helpers.template(
            {"a": {"type": "OS::Heat::TestResource"}},
            outputs={"o": {"value": {"get_attr": ["a", "output"]}}},
        ),
    )
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE")
    return {"stack_name": "fuzzed", "id": stack_id}


@pytest.fixture(scope="module")
def api_schema(allinone):
    return schemathesis.openapi.from_url(allinone.url + "/v1/openapi.json")


def test_document_covers_the_route_table(allinone):
    doc = requests.get(allinone.url + "/v1/openapi.json").json()
    assert doc["openapi"] == "3.0.3"
    paths = doc["paths"]
    for path, method in (
        ("/v1/{tenant}/stacks", "post"),
        ("/v1/{tenant}/stacks/{name}/{stack_id}", "patch"),
        (
            "/v1/{tenant}/stacks/{name}/{stack_id}/resources/{resource}"
            "/signal",
            "post",
        ),
        ("/v1/{tenant}/stacks/{name}/{stack_id}/outputs/{output_key}", "get"),
        ("/v1/{tenant}/resource_types/{type_name}/template", "get"),
        ("/v1/{tenant}/services", "get"),
        ("/v1/{tenant}/promotions", "post"),
        ("/v1/{tenant}/promotions/{promotion_id}/actions", "post"),
        ("/v1/{tenant}/stacks/{name}/{stack_id}/promotions", "get"),
        ("/v1/{tenant}/references", "get"),
        ("/v1/{tenant}/apps/{app}/pushes", "post"),
        ("/v1/{tenant}/apps/{app}/builds", "get"),
        ("/v1/{tenant}/apps/{app}/builds/{build}/log", "get"),
        ("/v1/{tenant}/apps/{app}/builds/{build}/actions", "post"),
    ):
        operation = paths[path][method]
        assert operation["x-policy-rule"]
        assert "500" not in operation["responses"]
    # The webhook: no token, no policy; the git servers' content types.
    webhook = paths["/v1/{tenant}/apps/{app}/webhook"]["post"]
    assert webhook["security"] == [] and "x-policy-rule" not in webhook
    assert {"202", "200", "401", "413", "429"} <= set(webhook["responses"])
    assert set(webhook["requestBody"]["content"]) == {
        "application/json",
        "application/x-www-form-urlencoded",
    }


def test_document_validates(allinone):
    """The served document is valid OpenAPI 3.0, its operationIds are
    unique, and it lists the query parameters the handlers read."""
    doc = requests.get(allinone.url + "/v1/openapi.json").json()
    openapi_spec_validator.validate(doc)
    ids = collections.Counter(
        op["operationId"]
        for ops in doc["paths"].values()
        for op in ops.values()
    )
    assert [i for i, n in ids.items() if n > 1] == []

    def query(path, method="get"):
        return {
            p["name"]
            for p in doc["paths"][path][method]["parameters"]
            if p["in"] == "query"
        }

    top = "/v1/{tenant}"
    one = top + "/stacks/{name}/{stack_id}"
    assert {
        "limit",
        "marker",
        "with_count",
        "show_hidden",
        "tags",
        "not_tags_any",
        "stack_status",
        "username",
        "parent",
    } <= query(top + "/stacks")
    assert "with_condition_func" in query(
        top + "/template_versions/{version}/functions"
    )
    assert {"name", "version", "support_status", "with_description"} <= query(
        top + "/resource_types"
    )
    assert "with_description" in query(top + "/resource_types/{type_name}")
    assert {"type", "property", "all_projects"} == query(top + "/references")
    assert {
        "nested_depth",
        "with_detail",
        "physical_resource_id",
        "action",
    } <= query(one + "/resources")
    assert {"limit", "marker", "sort_keys", "resource_type"} <= query(
        one + "/resources/{resource}/events"
    )


def _fuzz(operation, mode=GenerationMode.POSITIVE, path=None, examples=5):
    known = {
        k: v for k, v in (path or {}).items() if "{%s}" % k in operation.path
    }
    strategy = operation.as_strategy(mode, path_parameters=known or None)

    @given(case=strategy)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case):
        # Redirects are answers of their own (302 with Location), as
        # clients see them before following.
        case.call_and_validate(
            checks=CHECKS, allow_redirects=False, timeout=30
        )

    run()


CHUNKS = 4


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_api_conforms(api_schema, allinone, chunk):
    """Random valid requests, the same aimed at the existing stack, then
    invalid requests (which must get 4xx, never 500). The operations are
    dealt into ``CHUNKS`` tests (a quarter each: xdist runs them side by
    side; one run of all of them was the suite's longest test)."""
    failures = []
    operations = [r.ok() for r in api_schema.get_all_operations()]
    assert len(operations) > 40
    operations = operations[chunk::CHUNKS]
    stack = _fuzzed_stack(allinone)
    real = {
        "tenant": "demo",
        "name": stack["stack_name"],
        "stack_id": stack["id"],
        "resource": "a",
        "output_key": "o",
        "type_name": "OS::Heat::TestResource",
    }
    runs = [
        (GenerationMode.POSITIVE, None, 5),
        (GenerationMode.POSITIVE, real, 5),
        (GenerationMode.NEGATIVE, real, 3),
    ]
    for operation in operations:
        for mode, path, examples in runs:
            try:
                _fuzz(operation, mode, path, examples)
            except errors.Unsatisfiable:
                pass  # nothing to make invalid in this operation
            except Exception as exc:  # noqa: BLE001 - report them all
                failures.append(
                    "%s (%s): %s" % (operation.label, mode, str(exc)[:1500])
                )
    assert not failures, "\n\n".join(failures)
