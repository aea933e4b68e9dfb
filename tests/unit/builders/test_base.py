"""Builder plugins and their option schemas."""

import pytest

from heat_lite import builders
from heat_lite.builders import base


def test_builders_are_stevedore_plugins(make_conf):
    assert builders.names() == ["artifact", "command", "filesystem"]
    for name in builders.names():
        builder = builders.get_builder(name, make_conf())
        assert isinstance(builder, base.Builder)
        assert builder.name == name


def test_unknown_builder_is_invalid(make_conf):
    with pytest.raises(builders.UnknownBuilder) as err:
        builders.get_builder("packer-on-the-api-host", make_conf())
    assert err.value.code == 400
    assert "artifact, command, filesystem" in str(err.value)


SCHEMA = {
    "label": base.Option(str, default="app", pattern=r"[a-z]{1,4}"),
    "size": base.Option(int, default=1, minimum=1, maximum=10),
    "kind": base.Option(str, default="a", choices=("a", "b")),
    "url": base.Option(str, required=True),
}


def test_defaults_are_filled_in():
    assert base.validate("x", SCHEMA, {"url": "u"}) == {
        "label": "app",
        "size": 1,
        "kind": "a",
        "url": "u",
    }


@pytest.mark.parametrize(
    "options, message",
    [
        ([], "options must be an object"),
        ({"url": "u", "colour": 1}, "unknown option(s) colour"),
        ({}, "option 'url' is required"),
        ({"url": 1}, "option 'url' must be of type str"),
        ({"url": "u", "size": True}, "option 'size' must be of type int"),
        ({"url": "u", "size": "2"}, "option 'size' must be of type int"),
        ({"url": "u", "size": 0}, "option 'size' must be at least 1"),
        ({"url": "u", "size": 11}, "option 'size' must be at most 10"),
        ({"url": "u", "kind": "c"}, "option 'kind' must be one of a, b"),
        ({"url": "u", "label": "ABC"}, "option 'label' does not match"),
    ],
)
def test_bad_options_are_named(options, message):
    with pytest.raises(base.InvalidBuildOptions) as err:
        base.validate("x", SCHEMA, options)
    assert err.value.code == 400
    assert str(err.value).startswith("Builder x: " + message)


def test_file_digest(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert base.file_digest(str(path)) == (
        3,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    )
