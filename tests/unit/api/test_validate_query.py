"""``POST /validate``'s ``ignore_errors``: Heat's codes only."""

import pytest

from heat_lite.api.controllers.v1 import templates
from heat_lite.common import exception


@pytest.mark.parametrize("value", [None, "99001", "99001,99001"])
def test_known_codes(value):
    templates._check_ignore_errors(value)


@pytest.mark.parametrize(
    "value, invalid",
    [("", "['']"), ("1,99001,2", "['1', '2']"), ("x", "['x']")],
)
def test_unknown_codes(value, invalid):
    with pytest.raises(exception.Invalid) as info:
        templates._check_ignore_errors(value)
    assert str(info.value) == "Invalid codes in ignore_errors : %s" % invalid
    assert info.value.code == 400
