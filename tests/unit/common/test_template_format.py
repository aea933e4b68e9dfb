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


@pytest.mark.parametrize(
    "doc",
    [
        '{"a": NaN}',
        '{"a": [1, Infinity]}',
        '{"a": -Infinity}',
        '{"a": 1e400}',
        '{"a": -1.5E+999}',
    ],
)
def test_json_numbers_are_finite(doc):
    """Python's json reads (and writes) NaN and Infinity, and 1e400 is
    Infinity: none of them could be in a JSON answer."""
    with pytest.raises(ValueError, match="NaN|finite"):
        template_format.loads_json(doc)


@pytest.mark.parametrize(
    "doc", ["a: .nan\n", "a: [-.inf]\n", "a: .Inf\n", "a: 1.0e+400\n"]
)
def test_yaml_numbers_are_finite(doc):
    with pytest.raises(ValueError, match="line 1") as info:
        template_format.loads(doc)
    assert "not a finite number" in str(info.value)


def test_finite_numbers_and_strings_pass():
    assert template_format.loads_json('{"a": 1.5e300, "b": 1e-400}') == {
        "a": 1.5e300,
        "b": 0.0,
    }
    assert template_format.loads('a: [1.5, "nan", .5]\nb: NaN\n') == {
        "a": [1.5, "nan", 0.5],
        "b": "NaN",
    }
    assert template_format.finite_float(" 2.5 ") == 2.5
    for text in ("nan", "-inf", "Infinity", "1e999", float("nan")):
        with pytest.raises(ValueError, match="not a finite number"):
            template_format.finite_float(text)
