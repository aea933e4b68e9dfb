"""Import rules of the house, checked by reading the source."""

import ast
import os

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
PKG = os.path.join(ROOT, "heat_lite")
# heat-lite-client, the openstack CLI plugin: a distribution of its own.
CLIENT = os.path.join(ROOT, "client", "heat_lite_client")


def _imports(package, top=PKG):
    """Yield (module path, imported name) for every module of a package
    (under ``top``: the server's package unless told otherwise)."""
    base = os.path.join(top, package)
    for root, _, files in os.walk(base):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        yield path, alias.name
                elif isinstance(node, ast.ImportFrom) and node.module:
                    for alias in node.names:
                        yield path, "%s.%s" % (node.module, alias.name)


def _violations(package, forbidden, allowed=(), top=PKG):
    return sorted(
        {
            (os.path.relpath(p, top), name)
            for p, name in _imports(package, top)
            if any(name == f or name.startswith(f + ".") for f in forbidden)
            and not any(name == a or name.startswith(a + ".") for a in allowed)
        }
    )


def test_engine_never_imports_api():
    assert _violations("engine", ["heat_lite.api"]) == []


def test_engine_never_imports_a_cloud_plugin():
    """What the engine needs of the cloud side is ``engine.cloud``'s
    ``CloudSide``, loaded by name (the ``heat_lite.clouds`` entry
    points); plugins ask the engine through ``resources.services``."""
    assert _violations("engine", ["heat_lite.resources.openstack"]) == []


def test_api_only_talks_to_the_engine_through_rpc():
    found = _violations(
        "api",
        [
            "heat_lite.db",
            "heat_lite.resources",
            "heat_lite.engine",
            "sqlalchemy",
        ],
        allowed=["heat_lite.engine.rpcapi"],
    )
    assert found == []


def test_sql_lives_in_db():
    for package in ("api", "engine", "resources", "common", "cmd"):
        assert _violations(package, ["sqlalchemy", "oslo_db"]) == [], package


def test_template_language_is_pure():
    found = _violations(
        "engine/template",
        [
            "heat_lite.db",
            "heat_lite.api",
            "oslo_messaging",
            "heat_lite.engine.endpoint",
            "heat_lite.engine.traversal",
            "heat_lite.engine.worker",
            "heat_lite.engine.recovery",
            "heat_lite.resources",
        ],
    )
    assert found == []


def test_graph_is_pure():
    found = [
        n
        for p, n in _imports("engine")
        if p.endswith(os.sep + "graph.py")
        and n.startswith("heat_lite")
        and not n.startswith("heat_lite.common")
    ]
    assert found == []


def test_resources_do_not_import_the_engine():
    """Plugins reach the engine only through the services object it
    gives them (``resources.services``: nested stacks, the config store,
    resource data, physical-id writes, the acting identity)."""
    found = _violations(
        "resources",
        ["heat_lite.engine"],
        allowed=["heat_lite.engine.template"],
    )
    assert found == []


def test_resources_do_not_import_the_database():
    assert _violations("resources", ["heat_lite.db"]) == []


def test_database_does_not_import_the_engine():
    found = _violations(
        "db", ["heat_lite.engine", "heat_lite.api", "heat_lite.resources"]
    )
    assert found == []


def test_apps_and_builders_are_parts_the_engine_composes():
    """Webhook parsing, source fetching and builders import nothing of
    the API, the database, the engine or the resource plugins: the
    engine (and the API, for the webhook) compose them."""
    for package in ("apps", "builders"):
        found = _violations(
            package,
            [
                "heat_lite.api",
                "heat_lite.db",
                "heat_lite.engine",
                "heat_lite.resources",
                "sqlalchemy",
                "oslo_db",
                "oslo_messaging",
            ],
        )
        assert found == [], package


def test_the_cli_plugin_is_a_client_only():
    """``heat_lite_client`` talks HTTP through heatclient: it imports
    nothing of the server (``heat_lite``), so it installs without the
    server's dependencies, and the server imports nothing of it (a server
    never needs openstackclient)."""
    assert os.path.isdir(CLIENT)
    assert _violations("", ["heat_lite"], top=CLIENT) == []
    assert _violations("", ["heat_lite_client"]) == []
