"""The API asks the engine for a stack's identity once per stack ID (per
project); names are always asked."""

import types

from heat_lite.api import identities

ID = "6f1c2d3e-0000-4000-8000-000000000001"


class _Engine:
    def __init__(self):
        self.asked = []

    def identify_stack(self, ctxt, name):
        self.asked.append((ctxt.project_id, name))
        # "web" is the stack's name; an ID-shaped name of another stack
        # (a stack may be named like an ID) resolves by name.
        stack_id = ID if name in (ID, "web") else "other-id"
        return {"stack_id": stack_id, "stack_name": "web", "tenant": "p"}


def _ctxt(project):
    return types.SimpleNamespace(project_id=project)


def test_an_id_is_asked_once_a_name_every_time():
    engine, ids = _Engine(), identities.Identities()
    for _ in range(3):
        assert ids.identify(engine, _ctxt("p"), ID)["stack_name"] == "web"
        assert ids.identify(engine, _ctxt("p"), "web")["stack_id"] == ID
    assert engine.asked == [("p", ID)] + [("p", "web")] * 3


def test_the_key_is_the_callers_project():
    engine, ids = _Engine(), identities.Identities()
    ids.identify(engine, _ctxt("p"), ID)
    ids.identify(engine, _ctxt("q"), ID)
    assert engine.asked == [("p", ID), ("q", ID)]


def test_an_id_shaped_name_found_by_name_is_not_kept():
    engine, ids = _Engine(), identities.Identities()
    name = "6f1c2d3e-0000-4000-8000-00000000ffff"
    for _ in range(2):
        assert ids.identify(engine, _ctxt("p"), name)["stack_id"] == "other-id"
    assert engine.asked == [("p", name)] * 2


def test_the_bound_empties_it():
    engine, ids = _Engine(), identities.Identities(size=1)
    ids.identify(engine, _ctxt("p"), ID)
    ids.identify(engine, _ctxt("q"), ID)  # past the bound: starts over
    ids.identify(engine, _ctxt("p"), ID)
    assert engine.asked == [("p", ID), ("q", ID), ("p", ID)]
