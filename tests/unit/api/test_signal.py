"""Signals reach a plugin's ``handle_signal`` synchronously, in the
engine, with the record's plugin instance; what it changes in its data
and metadata is stored, with a SIGNAL event. No built-in type takes
signals yet, so a fake one is registered for the test."""

import uuid

import oslo_messaging as messaging
import pytest

from harness import endpoints, inprocess, polling
from heat_lite import conf
from heat_lite.common import context, exception
from heat_lite.resources import base

CONF = conf.CONF


class Signalled(base.Resource):
    """Counts signals in its data and keeps the last one in metadata."""

    properties_schema = None

    def handle_create(self):
        self.resource_id_set("signalled-" + uuid.uuid4().hex[:6])

    def handle_signal(self, details):
        self.data_set("count", self.data().get("count", 0) + 1)
        self.metadata = dict(self.metadata, last=details)
        if details == {"fail": True}:
            raise ValueError("refused")
        return "Signal %d received" % self.data()["count"]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with inprocess.engine_process(
        "sqlite",
        tmp_path_factory.mktemp("signal"),
        types={"Test::Signalled": Signalled},
    ) as proc:
        yield endpoints.Engine(proc.ops, proc.services)


def test_signal_reaches_the_plugin(engine):
    ctxt = context.RequestContext(project_id="p", user_id="u")
    tmpl = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "s": {"type": "Test::Signalled", "metadata": {"m": 1}},
            "n": {"type": "OS::Heat::None"},
        },
    }
    ident = engine.create_stack(ctxt, "sig", tmpl, {}, {}, None, None, {})
    polling.stack_reaches(ident["stack_id"], "CREATE_COMPLETE")
    assert engine.resource_metadata(ctxt, ident, "s") == {"m": 1}
    engine.resource_signal(ctxt, ident, "s", {"status": "SUCCESS"})
    engine.resource_signal(ctxt, ident, "s", None)
    assert engine.resource_metadata(ctxt, ident, "s") == {"m": 1, "last": None}
    events = engine.list_events(ctxt, ident, resource_name="s")
    signals = [e for e in events if e["resource_action"] == "SIGNAL"]
    assert [e["resource_status_reason"] for e in signals] == [
        "Signal 1 received",
        "Signal 2 received",
    ]
    other = context.RequestContext(project_id="q", user_id="u")
    for ctx, name, details, error in (
        (ctxt, "s", {"fail": True}, exception.Invalid),
        (ctxt, "n", {}, exception.ResourceActionNotSupported),
        (ctxt, "zz", {}, exception.ResourceNotFound),
        (other, "s", {}, exception.StackNotFound),
    ):
        # Called in-process, the endpoint wraps the typed errors it
        # sends back to RPC callers.
        with pytest.raises(messaging.ExpectedException) as err:
            engine.resource_signal(ctx, ident, name, details)
        assert isinstance(err.value.exc_info[1], error)
    failed = [
        e
        for e in engine.list_events(ctxt, ident, resource_name="s")
        if e["resource_status"] == "SIGNAL_FAILED"
    ]
    assert "refused" in failed[0]["resource_status_reason"]
