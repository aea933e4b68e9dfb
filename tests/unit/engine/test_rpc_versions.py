"""Rolling upgrades: what an API or engine of this release sends to
engines of the previous one, over a real oslo.messaging transport
(``fake://``, in-process) and a real RPC server that serves an older
version of the engine and worker topics.

Every call a previous-release engine knows must be served by it (no
message is stamped with this release's version unless it needs it), and
with ``[upgrade_levels]`` pinned, a call that needs more is refused
before it is sent (409), never left to fail on the engine.
"""

import inspect
import uuid

import oslo_messaging as messaging
import pytest

from harness import polling
from heat_lite import conf
from heat_lite.common import context, exception, rpc
from heat_lite.engine import rpcapi

CONF = conf.CONF


def _introduced():
    """{method: the version that brought it}, from rpcapi's history."""
    found, version = {}, None
    for line in rpcapi.__doc__.splitlines():
        line = line.strip()
        if line.startswith("* 1."):
            version, line = line[2:].split(" - ", 1)
        if version is None or not line:
            continue
        if line.startswith("Every method"):
            break
        for word in line.replace(";", ",").split(","):
            name = word.strip().split(" ")[0].strip("(`.")
            if name.isidentifier() and name.islower() and "_" in name:
                found.setdefault(name, version)
    return found


class _OldEngine:
    """Answers every method the way an engine of ``version`` would
    dispatch it: the oslo.messaging dispatcher refuses a message stamped
    with a newer version than the endpoint's target."""

    def __init__(self, version):
        self.target = messaging.Target(version=version)
        self.served = []

    def __getattr__(self, name):
        if name.startswith(("_", "oslo_")):
            raise AttributeError(name)

        def serve(ctxt, **kwargs):
            self.served.append(name)
            return {}

        return serve


@pytest.fixture
def old_engines():
    """Servers of the engine and worker topics at the previous release's
    versions (engine 1.17, worker 1.0)."""
    suffix = uuid.uuid4().hex[:8]
    CONF.set_override("topic", "versions-engine-" + suffix, "engine")
    CONF.set_override("worker_topic", "versions-worker-" + suffix, "engine")
    engine, worker = _OldEngine("1.17"), _OldEngine("1.0")
    servers = [
        rpc.get_server(CONF.engine.topic, "old", [engine]),
        rpc.get_server(CONF.engine.worker_topic, "old", [worker]),
    ]
    for server in servers:
        server.start()
    yield engine, worker
    for server in servers:
        server.stop()
        server.wait()
    for name in ("topic", "worker_topic"):
        CONF.clear_override(name, "engine")
    for name in ("engine", "worker"):
        CONF.clear_override(name, "upgrade_levels")


def _arguments(method):
    """Placeholder arguments for every parameter ``method`` requires."""
    values = {}
    for name, param in inspect.signature(method).parameters.items():
        if name == "ctxt" or param.default is not inspect.Parameter.empty:
            continue
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        values[name] = {} if name in ("args", "body", "params") else "x"
    return values


def _engine_methods():
    return sorted(
        name
        for name, member in inspect.getmembers(rpcapi.EngineAPI)
        if inspect.isfunction(member) and not name.startswith("_")
    )


def test_the_history_names_every_method():
    """The table this test reads is the module's history: a new method
    must be written into it with its version."""
    introduced = _introduced()
    missing = [m for m in _engine_methods() if m not in introduced]
    assert missing == []
    assert introduced["show_stack"] == "1.0"
    assert introduced["list_traversals"] == "1.17"
    assert introduced["show_retention"] == "1.18"


def _version(text):
    return tuple(int(part) for part in text.split("."))


def test_pinned_to_the_previous_release_every_old_call_is_served(
    old_engines, monkeypatch
):
    engine, _ = old_engines
    CONF.set_override("engine", "1.17", "upgrade_levels")
    api = rpcapi.EngineAPI(timeout=10)
    # What each call is stamped with: never older than its method (an
    # engine of that older version would not know the method).
    stamped = []
    prepare = rpc.CountingClient.prepare

    def recording(self, **kwargs):
        stamped.append(kwargs.get("version") or rpcapi.BASE_VERSION)
        return prepare(self, **kwargs)

    monkeypatch.setattr(rpc.CountingClient, "prepare", recording)
    ctxt = context.RequestContext(project_id="p", user_id="u")
    introduced = _introduced()
    refused = []
    for name in _engine_methods():
        method = getattr(api, name)
        del stamped[:]
        try:
            method(ctxt, **_arguments(method))
        except exception.RPCVersionPinned as exc:
            assert exc.code == 409
            assert "1.17" in str(exc)
            refused.append(name)
        assert _version(stamped[0]) >= _version(introduced[name]), name
    new = sorted(
        m for m in _engine_methods() if _version(introduced[m]) > (1, 17)
    )
    assert refused == new and new
    assert sorted(set(engine.served)) == sorted(
        set(_engine_methods()) - set(new)
    )


def test_unpinned_old_calls_still_reach_an_old_engine(old_engines):
    """Without a pin, a call an old engine knows is stamped with the
    version that brought it, not with this release's."""
    engine, _ = old_engines
    api = rpcapi.EngineAPI(timeout=10)
    ctxt = context.RequestContext(project_id="p", user_id="u")
    api.show_stack(ctxt, {"stack_id": "s"})
    api.list_stacks(ctxt, tags=["a"])
    api.list_events(ctxt, {"stack_id": "s"}, nested_depth=2)
    api.list_traversals(ctxt, {"stack_id": "s"})
    assert engine.served == [
        "show_stack",
        "list_stacks",
        "list_events",
        "list_traversals",
    ]


def test_worker_casts_to_an_old_worker(old_engines):
    _, worker = old_engines
    CONF.set_override("worker", "1.0", "upgrade_levels")
    api = rpcapi.WorkerAPI()
    ctxt = context.RequestContext(project_id="p", user_id="u")
    api.check_resources(ctxt, "s", "t", [[1, "update"]])
    with pytest.raises(exception.RPCVersionPinned) as refused:
        api.detect_drift(ctxt, "s", "d")
    assert "worker" in str(refused.value)
    polling.until(lambda: worker.served, 10, "the old worker to serve")
    assert worker.served == ["check_resources"]
