"""The ``verify`` document: what is accepted, normalised or refused."""

import pytest

from heat_lite.common import exception, verify_spec


def test_normalised_with_default_timeout():
    spec = verify_spec.parse(
        {"checks": [{"type": "output", "output": "ok", "equals": [1]}]}
    )
    assert spec == {
        "timeout": verify_spec.DEFAULT_TIMEOUT,
        "checks": [{"type": "output", "output": "ok", "equals": [1]}],
    }


def test_equals_may_be_null_or_false():
    for value in (None, False, 0, ""):
        check = {"type": "output", "output": "o", "equals": value}
        assert verify_spec.parse({"checks": [check]})["checks"] == [check]


@pytest.mark.parametrize(
    "spec",
    [
        None,
        [],
        {"checks": {}},
        {"checks": [{"type": "signal"}] * 21},
        {"checks": ["signal"]},
        {"checks": [{"type": "output", "output": "", "equals": 1}]},
        {"checks": [{"type": "signal"}], "timeout": True},
        {"checks": [{"type": "signal"}], "timeout": 10**9},
    ],
)
def test_refused(spec):
    with pytest.raises(exception.InvalidVerify) as err:
        verify_spec.parse(spec)
    assert err.value.code == 400


def test_describe_and_verdict():
    assert (
        verify_spec.describe({"type": "output", "output": "h", "equals": True})
        == "output h == true"
    )
    assert verify_spec.verdict("FAIL", None) == ("FAIL", "")
    with pytest.raises(exception.InvalidVerify):
        verify_spec.verdict("pass", None)
    with pytest.raises(exception.InvalidVerify):
        verify_spec.verdict("PASS", 3)
