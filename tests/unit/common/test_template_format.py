"""The one reader of user documents: plain data only, sizes in bytes."""

import pytest

from heat_lite.common import exception, template_format


def test_plain_data_comes_out():
    doc = (
        "heat_template_version: 2018-08-31\n"
        "when: 2020-01-31T10:00:00Z\n"
        "explicit: !!timestamp 2020-01-31\n"
        "1: one\nnull: none\ntrue: yes\n"
        "list: [1, 2.5, x, ~]\n"
    )
    assert template_format.loads(doc) == {
        "heat_template_version": "2018-08-31",
        "when": "2020-01-31T10:00:00Z",
        "explicit": "2020-01-31",
        "1": "one",
        "null": "none",
        "true": True,
        "list": [1, 2.5, "x", None],
    }


@pytest.mark.parametrize(
    "doc",
    [
        "a: &x [1]\nb: *x\n",
        "a: !!binary aGVsbG8=\n",
        "a: !!set {x, y}\n",
        "a: !!omap [{x: 1}]\n",
        "a: !!python/name:os.system\n",
        "a: !custom x\n",
        "a: " + "[" * 101 + "]" * 101 + "\n",
        "a: " + "[" * 100000 + "\n",
        b"a: \xff\n",
    ],
)
def test_refused(doc):
    with pytest.raises(ValueError):
        template_format.loads(doc)


def test_json_depth_and_encoding():
    assert template_format.loads_json(b'{"a": [1]}') == {"a": [1]}
    with pytest.raises(ValueError):
        template_format.loads_json("[" * 101 + "]" * 101)
    with pytest.raises(ValueError):
        template_format.loads_json("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError):
        template_format.loads_json(b'"\xff"')


def test_sizes_are_bytes():
    template_format.check_size("\u00e9" * 50, 100, "Template")
    with pytest.raises(exception.RequestLimitExceeded) as info:
        template_format.check_size("\u00e9" * 51, 100, "Template")
    assert "102 bytes" in str(info.value)
    with pytest.raises(exception.RequestLimitExceeded):
        template_format.check_size(b"x" * 101, 100, "Template")


def test_parse_names_the_document():
    with pytest.raises(exception.StackValidationFailed) as info:
        template_format.parse(
            "a: *x", 100, "Template", exception.StackValidationFailed
        )
    assert str(info.value).startswith("Error parsing template:")
