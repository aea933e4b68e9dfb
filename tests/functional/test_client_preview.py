"""``openstack stack promote --dry-run`` with the real ``openstack`` CLI
against a small HTTP server of the test's own, serving the answer of
``POST /v1/<project>/promotions/preview`` as the API defines it.

A stand-in, not a mock of heat_lite: the route's server side is being
written on another branch; until it is merged this checks what the CLI
sends and how it shows the answer. ``test_osc_plugin`` runs the same
command against a real heat_lite.
"""

import json
import subprocess

import pytest

from harness import deployment as deployment_mod
from harness import stand_in as stand_in_mod

pytestmark = pytest.mark.functional
PREVIEW = {
    "preview": {
        "source": {"stack": "app1-test", "id": "s-1", "project": "test"},
        "target": {
            "stack": "app1-prod",
            "id": "t-1",
            "project": "prod",
            "exists": True,
        },
        "template_changed": True,
        "parameters": {
            "flavor": {"current": "small", "promoted": "large"},
            "php_version": {"current": "5.4.45", "promoted": "5.4.46"},
            "replicas": {"current": 3, "promoted": 3},
            "debug": {"current": None, "promoted": False},
        },
        "dropped": {
            "parameter_defaults": {"replicas": 3, "region": "eu-1"},
            "resource_registry": {"My::DB": "prod_db.yaml"},
        },
        "resources": {
            "added": ["cache"],
            "deleted": ["legacy"],
            "replaced": ["app"],
            "updated": ["lb", "dns"],
            "unchanged": ["db"],
        },
        "verify": {
            "timeout": 600,
            "checks": [
                {"type": "output", "output": "healthy", "equals": "yes"},
                {"type": "signal"},
            ],
        },
    }
}


@pytest.fixture
def stand_in():
    """An HTTP server answering every POST with PREVIEW, recording what
    it was sent: [(method, path, body)]."""
    with stand_in_mod.endpoint(lambda path: PREVIEW) as served:
        yield served


def _promote(endpoint, *args):
    result = subprocess.run(
        [
            deployment_mod.command("openstack"),
            "--os-auth-type",
            "none",
            "--os-endpoint",
            endpoint,
            "stack",
            "promote",
            "app1-test",
            "app1-prod",
            "--target-project",
            "prod",
            "--parameter",
            "flavor=large",
            "--verify-output",
            "healthy=yes",
            "--dry-run",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _rows(table):
    """{field: [lines]} of a ShowOne table (continued rows joined)."""
    rows, field = {}, None
    for line in table.splitlines():
        if not line.startswith("|"):
            continue
        name, value = (cell.strip() for cell in line.strip("|").split("|"))
        if name == "Field":
            continue
        field = name or field
        rows.setdefault(field, []).append(value)
    return rows


def test_dry_run_posts_the_promotion_to_preview_and_shows_it(stand_in):
    endpoint, received = stand_in
    rows = _rows(_promote(endpoint, "--max-width", "0"))
    # The same body as the promotion, to the preview route, nothing else.
    assert received == [
        (
            "POST",
            "/v1/test/promotions/preview",
            {
                "source": {"stack": "app1-test"},
                "target": {"stack": "app1-prod", "project": "prod"},
                "parameters": {"flavor": "large"},
                "verify": {
                    "checks": [
                        {
                            "type": "output",
                            "output": "healthy",
                            "equals": "yes",
                        }
                    ]
                },
            },
        )
    ]
    assert rows["source"] == ["test/app1-test (s-1)"]
    assert rows["target"] == ["prod/app1-prod (t-1), updated in place"]
    assert rows["template_changed"] == ["yes"]
    assert rows["parameters"] == [
        "debug: false (new)",
        "flavor: small -> large",
        "php_version: 5.4.45 -> 5.4.46",
        "replicas: 3 (unchanged)",
    ]
    # The target's own overlays that the promotion would not keep.
    assert rows["dropped"] == [
        "parameter_defaults: region = eu-1",
        "parameter_defaults: replicas = 3",
        "resource_registry: My::DB = prod_db.yaml",
    ]
    assert rows["resources"] == [
        "replaced: app",
        "deleted: legacy",
        "added: cache",
        "updated: lb, dns",
        "unchanged: db",
    ]
    assert rows["verify"] == [
        "output healthy == yes",
        "signal",
        "within 600 s",
    ]


def test_dry_run_as_json_is_the_answer_itself(stand_in):
    endpoint, _ = stand_in
    shown = json.loads(_promote(endpoint, "-f", "json"))
    assert shown == PREVIEW["preview"]
