"""Notifications cost nothing without a driver."""

from heat_lite.common import notify


class _Notifier:
    def __init__(self, enabled):
        self.enabled, self.sent, self.checks = enabled, [], 0

    def is_enabled(self):
        self.checks += 1
        return self.enabled

    def info(self, ctxt, event_type, payload):
        self.sent.append(("INFO", event_type, payload))

    def error(self, ctxt, event_type, payload):
        self.sent.append(("ERROR", event_type, payload))


RECORD = {
    "id": 1,
    "stack_id": "s",
    "stack_name": "st",
    "stack_tenant": "p",
    "name": "r",
    "type": "T",
    "physical_resource_id": None,
}


def _use(monkeypatch, notifier):
    notify.cleanup()
    monkeypatch.setattr(notify, "_notifier", lambda: notifier)


def test_without_a_driver_nothing_is_built_or_sent(monkeypatch):
    notifier = _Notifier(False)
    _use(monkeypatch, notifier)
    monkeypatch.setattr(notify, "resource_payload", None)  # never called
    for _ in range(5):
        notify.resource_event(RECORD, "CREATE", "start")
    assert notifier.sent == [] and notifier.checks == 1
    notify.cleanup()


def test_resource_notifications(monkeypatch):
    notifier = _Notifier(True)
    _use(monkeypatch, notifier)
    notify.resource_event(RECORD, "CREATE", "start")
    notify.resource_event(RECORD, "CREATE", "end", physical_id="phys")
    notify.resource_event(RECORD, "DELETE", "error", "boom")
    assert [(p, t) for p, t, _ in notifier.sent] == [
        ("INFO", "orchestration.resource.create.start"),
        ("INFO", "orchestration.resource.create.end"),
        ("ERROR", "orchestration.resource.delete.error"),
    ]
    end = notifier.sent[1][2]
    assert end["state"] == "CREATE_COMPLETE"
    assert end["physical_resource_id"] == "phys"
    assert end["stack_identity"] == "arn:openstack:heat::p:stacks/st/s"
    assert end["resource_name"] == "r" and end["resource_type"] == "T"
    assert notifier.sent[2][2]["state_reason"] == "boom"
    notify.cleanup()


def test_a_broken_notifier_never_fails_the_action(monkeypatch):
    notifier = _Notifier(True)
    notifier.info = None  # calling it raises TypeError
    _use(monkeypatch, notifier)
    notify.resource_event(RECORD, "CREATE", "start")  # logs, no raise
    notify.cleanup()
