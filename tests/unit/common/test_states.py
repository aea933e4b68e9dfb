"""The stack transition table is what the engine consults.

``states.check_transition`` is walked pair by pair against Heat's rules
written out here, and ``traversal.ops.check_start`` (what the endpoint
calls before starting an operation) must accept and refuse exactly what
the table says, with the table's reason. ``test_start_race`` checks
that the conditional write that starts a traversal refuses the same
pairs on each database.
"""

import pytest

from heat_lite.common import exception, states
from heat_lite.common.states import Action
from heat_lite.engine.traversal import ops

# Heat's rules, spelt out: (operation, the stack's action) pairs that are
# refused. Every other pair is accepted.
REFUSED = {
    (Action.UPDATE, Action.DELETE),
    (Action.UPDATE, Action.SUSPEND),
    (Action.SUSPEND, Action.DELETE),
    (Action.RESUME, Action.DELETE),
    (Action.CHECK, Action.DELETE),
    (Action.ROLLBACK, Action.DELETE),
    (Action.SNAPSHOT, Action.DELETE),
    (Action.SNAPSHOT, Action.SUSPEND),
    (Action.RESTORE, Action.DELETE),
    (Action.RESTORE, Action.SUSPEND),
}
PAIRS = [(new, current) for new in Action for current in Action]


def _stack(action):
    return {"name": "s", "action": action, "deleted_at": None}


@pytest.mark.parametrize(("new", "current"), PAIRS)
def test_the_table_says_heats_rules(new, current):
    reason = states.check_transition(current, new)
    assert (reason is not None) == ((new, current) in REFUSED)
    assert (current in states.refused_from(new)) == (reason is not None)


@pytest.mark.parametrize(("new", "current"), PAIRS)
def test_check_start_follows_the_table(new, current):
    reason = states.check_transition(current, new)
    if reason is None:
        ops.check_start(_stack(current), new)
        return
    with pytest.raises(exception.NotSupported) as err:
        ops.check_start(_stack(current), new)
    assert reason in str(err.value)


def test_the_table_takes_plain_strings():
    """Rows carry plain strings: the table answers for them too."""
    assert states.check_transition("DELETE", "UPDATE") == (
        "Updating a stack when it is deleting"
    )
    assert states.check_transition("CREATE", "UPDATE") is None


def test_a_deleted_stack_refuses_everything():
    stack = dict(_stack(Action.CREATE), deleted_at="yesterday")
    for new in Action:
        with pytest.raises(exception.StackNotFound):
            ops.check_start(stack, new)


def test_a_vocabulary_names_its_states_groups_and_transitions():
    rollout = states.ROLLOUT
    assert rollout.PAUSED == "PAUSED"
    assert rollout.ACTIVE == ("IN_PROGRESS", "PAUSED")
    assert "CANCELLED" in rollout and "ROLLED_BACK" not in rollout
    assert rollout.may_follow("IN_PROGRESS", "PAUSED")
    assert not rollout.may_follow("PAUSED", "COMPLETE")
    target = states.ROLLOUT_TARGET
    assert list(target)[0] == "PENDING"
    assert set(target.TERMINAL) | set(target.RUNNING) | {"PENDING"} == set(
        target
    )


def test_a_vocabulary_refuses_a_state_it_does_not_have():
    with pytest.raises(ValueError):
        states.Vocabulary("x", {"A": ("B",)})
    with pytest.raises(ValueError):
        states.Vocabulary("x", {"A": ()}, SOME=("B",))


def test_every_vocabulary_is_served():
    served = states.as_dict()
    assert sorted(served) == sorted(v.name for v in states.VOCABULARIES)
    assert served["verification"]["groups"]["RUNNING"][0] == "UPDATING"
