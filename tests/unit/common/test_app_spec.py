"""The app body: what is accepted, normalised, and every refusal (400)."""

import copy

import pytest

from heat_lite import builders, conf
from heat_lite.common import app_spec, exception

CONF = conf.CONF
KEY = "an encryption key of 32 chars..."
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"image": {"type": "string"}},
    "resources": {},
}


@pytest.fixture(autouse=True)
def _conf():
    CONF.set_override(
        "allowed_sources", ["https://git.example.com/*"], group="apps"
    )
    CONF.set_override("auth_encryption_key", KEY)
    yield
    CONF.clear_override("allowed_sources", group="apps")
    CONF.clear_override("auth_encryption_key")


def body(**changes):
    result = {
        "name": "shop",
        "source": {
            "url": "https://git.example.com/shop.git",
            "branches": ["main", "release/*"],
        },
        "builder": {"name": "artifact", "options": {}},
        "template": copy.deepcopy(TEMPLATE),
        "image_parameter": "image",
    }
    result.update(changes)
    return {k: v for k, v in result.items() if v is not ...}


def test_a_minimal_app_is_normalised():
    app = app_spec.parse(body())
    assert app["name"] == "shop"
    assert app["source"]["branches"] == ["main", "release/*"]
    assert app["builder"]["name"] == "artifact"
    assert app["builder"]["options"] == builders.get_builder(
        "artifact", CONF.apps
    ).validate_options({})
    assert app["files"] == {} and app["environment"] == {}
    assert app["stacks"] == {} and app["verify"] is None
    assert app["webhook_secret"] is None and app["retention"] is None
    assert app_spec.retention(app) == {
        "keep_last": CONF.retention.keep_last,
        "grace": CONF.retention.grace,
        "mode": CONF.retention.mode,
    }


def test_everything_optional_is_kept():
    app = app_spec.parse(
        body(
            template="heat_template_version: 2021-04-16\n"
            "parameters: {image: {type: string}}\n",
            files={"a.yaml": "x"},
            environment="parameters: {image: cirros}\n",
            stacks={"main": "shop-prod", "release/1.0": "shop-r1"},
            verify={"checks": [{"type": "signal"}]},
            retention={"keep_last": 10, "mode": "hide"},
            webhook_secret="s" * 16,
        )
    )
    assert app["retention"] == {"keep_last": 10, "mode": "hide"}
    assert app_spec.retention(app) == {
        "keep_last": 10,
        "grace": CONF.retention.grace,
        "mode": "hide",
    }
    assert app["template"]["parameters"] == {"image": {"type": "string"}}
    assert app["environment"] == {"parameters": {"image": "cirros"}}
    assert app["stacks"] == {"main": "shop-prod", "release/1.0": "shop-r1"}
    assert app["verify"]["timeout"] == 600
    assert app["webhook_secret"] == "s" * 16


@pytest.mark.parametrize(
    "bad, error",
    [
        ([], exception.InvalidApp),
        ({**body(), "colour": "red"}, exception.InvalidApp),
        (body(name=...), exception.InvalidApp),
        (body(source=...), exception.InvalidApp),
        (body(builder=...), exception.InvalidApp),
        (body(template=...), exception.InvalidApp),
        (body(image_parameter=...), exception.InvalidApp),
        # name: Heat's stack name rules
        (body(name="1shop"), exception.InvalidApp),
        (body(name="shop/x"), exception.InvalidApp),
        (body(name="s" * 256), exception.InvalidApp),
        (body(name=7), exception.InvalidApp),
        # source
        (body(source="https://git.example.com/x"), exception.InvalidApp),
        (
            body(source={"url": "https://git.example.com/x", "x": 1}),
            exception.InvalidApp,
        ),
        (
            body(
                source={
                    "url": "https://evil.example.com/x",
                    "branches": ["main"],
                }
            ),
            exception.InvalidApp,
        ),  # fmt: skip
        (
            body(source={"url": "ext::sh -c id", "branches": ["main"]}),
            exception.InvalidApp,
        ),
        (
            body(source={"url": "https://git.example.com/x"}),
            exception.InvalidApp,
        ),
        (
            body(source={"url": "https://git.example.com/x", "branches": []}),
            exception.InvalidApp,
        ),  # fmt: skip
        (
            body(
                source={"url": "https://git.example.com/x", "branches": "main"}
            ),
            exception.InvalidApp,
        ),  # fmt: skip
        (
            body(
                source={
                    "url": "https://git.example.com/x",
                    "branches": ["ma..in"],
                }
            ),
            exception.InvalidApp,
        ),  # fmt: skip
        (
            body(
                source={
                    "url": "https://git.example.com/x",
                    "branches": ["-main"],
                }
            ),
            exception.InvalidApp,
        ),  # fmt: skip
        (
            body(
                source={
                    "url": "https://git.example.com/x",
                    "branches": ["a b"],
                }
            ),
            exception.InvalidApp,
        ),  # fmt: skip
        (
            body(source={"url": "https://git.example.com/x", "branches": [3]}),
            exception.InvalidApp,
        ),  # fmt: skip
        (
            body(
                source={
                    "url": "https://git.example.com/x",
                    "branches": ["b%d" % i for i in range(51)],
                }
            ),
            exception.InvalidApp,
        ),  # fmt: skip
        # builder
        (body(builder="artifact"), exception.InvalidApp),
        (body(builder={"options": {}}), exception.InvalidApp),
        (body(builder={"name": "artifact", "x": 1}), exception.InvalidApp),
        (body(builder={"name": "nonesuch"}), exception.InvalidApp),
        (
            body(builder={"name": "artifact", "options": {"nope": 1}}),
            exception.InvalidApp,
        ),
        (
            body(builder={"name": "artifact", "options": []}),
            exception.InvalidApp,
        ),
        # template, files, environment
        (body(template=[1]), exception.InvalidApp),
        (body(template="{{{"), exception.StackValidationFailed),
        (body(template={"resources": {}}), exception.InvalidApp),
        (body(files={"a": 1}), exception.InvalidApp),
        (body(files=["a"]), exception.InvalidApp),
        (body(environment=[1]), exception.InvalidApp),
        # image_parameter
        (body(image_parameter="flavor"), exception.InvalidApp),
        (body(image_parameter=""), exception.InvalidApp),
        (body(image_parameter=["image"]), exception.InvalidApp),
        # stacks
        (body(stacks=["shop-prod"]), exception.InvalidApp),
        (body(stacks={"main": "1bad"}), exception.InvalidApp),
        (body(stacks={"dev": "shop-dev"}), exception.InvalidApp),
        (body(stacks={"release/*": "shop-r"}), exception.InvalidApp),
        # verify
        (body(verify={"checks": []}), exception.InvalidVerify),
        # retention
        (body(retention=3), exception.InvalidApp),
        (body(retention={"keep": 3}), exception.InvalidApp),
        (body(retention={"keep_last": -1}), exception.InvalidApp),
        (body(retention={"keep_last": True}), exception.InvalidApp),
        (body(retention={"grace": "1d"}), exception.InvalidApp),
        (body(retention={"mode": "shred"}), exception.InvalidApp),
        # webhook_secret
        (body(webhook_secret="short"), exception.InvalidApp),
        (body(webhook_secret=1234567890123456789), exception.InvalidApp),
        (body(webhook_secret="s" * 1025), exception.InvalidApp),
    ],
)
def test_refusals(bad, error):
    with pytest.raises(error) as raised:
        app_spec.parse(bad)
    assert raised.value.code == 400


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"source": {"url": "https://evil.example.com/x",
                        "branches": ["main"]}},
            "is not allowed: it matches none of",
        ),
        ({"builder": {"name": "nonesuch"}}, "Unknown builder 'nonesuch'"),
        (
            {"builder": {"name": "artifact", "options": {"nope": 1}}},
            "unknown option",
        ),
    ],
)  # fmt: skip
def test_source_and_builder_refusals_say_why(changes, message):
    with pytest.raises(exception.InvalidApp, match=message):
        app_spec.parse(body(**changes))


def test_a_template_over_the_stack_limit_is_refused():
    CONF.set_override("max_template_size", 200)
    try:
        big = copy.deepcopy(TEMPLATE)
        big["description"] = "x" * 300
        for changes in (
            {"template": big},
            {"files": {"a.yaml": "x" * 300}},
            {"environment": {"parameters": {"image": "x" * 300}}},
        ):
            with pytest.raises(exception.RequestLimitExceeded):
                app_spec.parse(body(**changes))
    finally:
        CONF.clear_override("max_template_size")


def test_a_secret_needs_the_encryption_key():
    CONF.clear_override("auth_encryption_key")
    with pytest.raises(exception.InvalidApp, match="auth_encryption_key"):
        app_spec.parse(body(webhook_secret="s" * 16))
    assert app_spec.parse(body())["webhook_secret"] is None


def test_merge_lays_a_patch_over_the_app_and_is_checked_again():
    app = app_spec.parse(body(webhook_secret="s" * 16))
    merged = app_spec.merge(app, {"image_parameter": "image"})
    assert "webhook_secret" not in merged
    assert app_spec.parse(merged)["template"] == app["template"]
    bad = app_spec.merge(app, {"template": {"heat_template_version": "x"}})
    with pytest.raises(exception.InvalidApp, match="declares no parameter"):
        app_spec.parse(bad)


@pytest.mark.parametrize(
    "patch", [{}, [], {"name": "other"}, {"colour": "red"}]
)
def test_merge_refusals(patch):
    app = app_spec.parse(body())
    with pytest.raises(exception.InvalidApp):
        app_spec.merge(app, patch)


def test_stack_names():
    assert app_spec.stack_name("shop", "main") == "shop-main"
    assert app_spec.stack_name("shop", "feature/a+b") == "shop-feature-a-b"
    assert app_spec.stack_name("shop", "main", {"main": "prod"}) == "prod"
    assert len(app_spec.stack_name("s" * 250, "b" * 20)) == 255
    assert app_spec.follows(["release/*"], "release/1")
    assert not app_spec.follows(["release/*"], "main")


def test_named_images_are_the_parameter_defaults_and_environment():
    spec = {
        "template": {
            "heat_template_version": "2021-04-16",
            "parameters": {
                "image": {"type": "string"},
                "base": {"type": "string", "default": "base-v1"},
                "count": {"type": "number", "default": 3},
                "odd": "not a map",
            },
        },
        "environment": {
            "parameters": {"image": "11111111-2222-3333-4444-555555555555"},
            "parameter_defaults": {"base": "base-v1", "extra": ""},
        },
    }
    assert app_spec.named_images(spec) == [
        "11111111-2222-3333-4444-555555555555",
        "base-v1",
    ]
    assert app_spec.named_images({"template": {}}) == []
