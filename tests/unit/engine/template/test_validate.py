"""The validate document and the template_versions listings."""

import pytest

from heat_lite.common import exception
from heat_lite.engine import template
from heat_lite.engine.template import validate, versions

TMPL = {
    "heat_template_version": "2018-03-02",
    "description": "A server",
    "parameter_groups": [{"label": "Basics", "parameters": ["name"]}],
    "parameters": {
        "name": {
            "type": "string",
            "label": "Server name",
            "description": "What to call it",
            "default": "web",
            "tags": ["basic"],
            "constraints": [
                {"length": {"min": 1, "max": 8}, "description": "short"},
                {"allowed_pattern": "[a-z]+"},
            ],
        },
        "count": {
            "type": "number",
            "default": 2,
            "constraints": [
                {"range": {"min": 1, "max": 4}},
                {"modulo": {"step": 2, "offset": 0}},
                {"allowed_values": [2, 4], "description": "even"},
            ],
        },
        "key": {
            "type": "string",
            "hidden": True,
            "constraints": [{"custom_constraint": "nova.keypair"}],
        },
        "cfg": {"type": "json"},
        "nets": {"type": "comma_delimited_list"},
        "flag": {"type": "boolean"},
    },
}


def test_document():
    doc = validate.document(
        template.parse(TMPL),
        {
            "parameters": {"key": "mykey", "flag": "yes"},
            "parameter_defaults": {"count": 4},
        },
    )
    assert doc["Description"] == "A server"
    assert doc["ParameterGroups"] == TMPL["parameter_groups"]
    params = doc["Parameters"]
    assert params["name"] == {
        "Type": "String",
        "Description": "What to call it",
        "NoEcho": "false",
        "Label": "Server name",
        "Default": "web",
        "Tags": ["basic"],
        "MinLength": 1,
        "MaxLength": 8,
        "AllowedPattern": "[a-z]+",
        "ConstraintDescription": "short",
    }
    assert params["count"] == {
        "Type": "Number",
        "Description": "",
        "NoEcho": "false",
        "Label": "count",
        "Default": 4,
        "MinValue": 1,
        "MaxValue": 4,
        "Step": 2,
        "Offset": 0,
        "AllowedValues": [2, 4],
        "ConstraintDescription": "even",
    }
    assert params["key"]["NoEcho"] == "true"
    assert params["key"]["Value"] == "******"
    assert params["key"]["CustomConstraint"] == "nova.keypair"
    assert "Default" not in params["key"]
    assert params["flag"]["Value"] == "yes"
    assert [params[n]["Type"] for n in ("cfg", "nets", "flag")] == [
        "Json",
        "CommaDelimitedList",
        "Boolean",
    ]
    assert doc["Environment"] == {
        "parameters": {"key": "******", "flag": "yes"},
        "parameter_defaults": {"count": 4},
        "resource_registry": {"resources": {}},
        "event_sinks": [],
    }


def test_document_without_groups_and_description():
    doc = validate.document(
        template.parse({"heat_template_version": "2013-05-23"})
    )
    assert doc["Description"] == "No description"
    assert doc["Parameters"] == {}
    assert "ParameterGroups" not in doc


def test_document_checks_names_not_values():
    t = template.parse(TMPL)
    with pytest.raises(exception.UnknownUserParameter):
        validate.document(t, {"parameters": {"nope": 1}})
    # As Heat's (not strict) validate: a value that does not fit its
    # parameter is shown as given; create is what refuses it.
    doc = validate.document(
        t, {"parameters": {"count": 3}, "parameter_defaults": {"name": 7}}
    )
    assert doc["Parameters"]["count"]["Value"] == 3
    assert doc["Parameters"]["name"]["Default"] == 7


def test_list_versions():
    listed = versions.list_versions()
    assert [v["version"] for v in listed][:2] == [
        "heat_template_version.2013-05-23",
        "heat_template_version.2014-10-16",
    ]
    assert len(listed) == 11 and all(v["type"] == "hot" for v in listed)
    by_version = {v["version"]: v["aliases"] for v in listed}
    assert by_version["heat_template_version.2021-04-16"] == [
        "heat_template_version.wallaby"
    ]
    assert by_version["heat_template_version.2015-10-15"] == []


def _names(version, **kw):
    return {f["functions"] for f in versions.list_functions(version, **kw)}


def test_list_functions_per_version():
    assert "Fn::Select" in _names("2013-05-23")
    assert "Fn::Join" not in _names("2014-10-16")
    assert "Fn::Select" not in _names("2015-10-15")
    assert "repeat" not in _names("2014-10-16")
    newton = _names("heat_template_version.newton")
    assert {"if", "yaql", "map_replace"} <= newton
    assert "equals" not in newton
    assert {"equals", "not", "and", "or"} <= _names(
        "newton", with_condition_func=True
    )
    assert _names("2018-08-31") == _names("2021-04-16")
    entry = versions.list_functions("2021-04-16")[0]
    assert set(entry) == {"functions", "description"}
    assert entry["description"].startswith("A function")


def test_list_functions_unknown_version():
    with pytest.raises(exception.NotFound):
        versions.list_functions("2012-12-12")


def test_each_version_allows_exactly_its_functions():
    added = {
        "2015-04-30": {"repeat", "digest"},
        "2015-10-15": {"str_split"},
        "2016-04-08": {"map_merge"},
        "2016-10-14": {"yaql", "map_replace", "if"},
        "2017-02-24": {"filter", "str_replace_strict"},
        "2017-09-01": {
            "make_url",
            "list_concat",
            "list_concat_unique",
            "str_replace_vstrict",
            "contains",
        },
    }
    previous = None
    for version in versions.VERSIONS:
        current = versions.FUNCTIONS[version]
        if (
            previous is not None
            and version != "2014-10-16"
            and version != "2015-10-15"
        ):
            assert current - previous == added.get(version, set()), version
        previous = current
