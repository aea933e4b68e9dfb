"""OS::Heat::CloudConfig and OS::Heat::MultipartMime build their config."""

import email

from heat_lite.resources import cloud_config, services
from tests.unit.resources.test_software_config import STACK, FakeStore

PATH = "resources.c.properties"


CONFIGS = services.Services(software_configs=FakeStore())


def _make(cls, **values):
    props = cls.validate_properties(values, PATH)
    plugin = cls(
        "c", "OS::Heat::X", props, stack=dict(STACK), services=CONFIGS
    )
    plugin.handle_create()
    return plugin


def test_cloud_config_is_yaml_after_the_marker():
    plugin = _make(
        cloud_config.CloudConfig, cloud_config={"packages": ["httpd"]}
    )
    assert plugin.get_attribute("config") == (
        "#cloud-config\npackages:\n- httpd\n"
    )


def test_multipart_takes_inline_parts_and_other_configs():
    cc = _make(cloud_config.CloudConfig, cloud_config={"a": 1})
    mime = _make(
        cloud_config.MultipartMime,
        parts=[
            {"config": cc.resource_id},
            {
                "config": "#!/bin/sh\necho hi\n",
                "subtype": "x-shellscript",
                "filename": "boot.sh",
            },
        ],
    )
    message = email.message_from_string(mime.get_attribute("config"))
    first, second = message.get_payload()
    assert first.get_payload() == "#cloud-config\na: 1\n"
    assert second.get_content_type() == "text/x-shellscript"
    assert second.get_filename() == "boot.sh"
    # A multipart part is taken apart into its own parts.
    outer = _make(
        cloud_config.MultipartMime,
        parts=[{"config": mime.resource_id, "type": "multipart"}],
    )
    parts = email.message_from_string(outer.get_attribute("config"))
    assert [p.get_content_type() for p in parts.get_payload()] == [
        "text/plain",
        "text/x-shellscript",
    ]


def test_inline_text_that_is_no_config_id_stays():
    assert cloud_config.stored_config(FakeStore(), "echo", "p1") == "echo"


def _parts(message_text):
    message = email.message_from_string(message_text)
    assert message.is_multipart()
    return [
        (p.get_content_type(), p.get_filename(), p.get_payload())
        for p in message.get_payload()
    ]


def test_software_config_user_data_wraps_a_multipart_config_part_by_part():
    from heat_lite.resources.openstack import server_user_data as sud

    mime = _make(
        cloud_config.MultipartMime,
        parts=[
            {"config": "#cloud-config\na: 1\n", "subtype": "cloud-config"},
            {"config": "#!/bin/sh\necho hi\n", "subtype": "x-shellscript"},
        ],
    )
    built = sud.text(
        {"user_data": mime.resource_id, "user_data_format": "SOFTWARE_CONFIG"},
        STACK["tenant"],
        CONFIGS.software_configs,
    )
    parts = _parts(built)
    assert [p[:2] for p in parts] == [
        ("text/cloud-config", "cloud-config"),
        ("text/part-handler", "part-handler.py"),
        ("text/cloud-config", None),
        ("text/x-shellscript", None),
        ("text/x-cfninitdata", "cfn-init-data"),
    ]
    assert parts[2][2] == "#cloud-config\na: 1\n"
    assert parts[4][2] == '{"deployments": []}'
    # The handler is Python that cloud-init can load.
    handler = {}
    exec(compile(parts[1][2], "part-handler.py", "exec"), handler)
    assert handler["list_types"]() == ["text/x-cfninitdata"]


def test_software_config_user_data_of_plain_text_is_one_part():
    from heat_lite.resources.openstack import server_user_data as sud

    parts = _parts(
        sud.text(
            {
                "user_data": "#!/bin/sh\n",
                "user_data_format": "SOFTWARE_CONFIG",
            },
            STACK["tenant"],
            CONFIGS.software_configs,
        )
    )
    assert parts[2] == ("text/plain", None, "#!/bin/sh\n")
    assert len(parts) == 4
    # RAW is the text as it is; no user data, nothing.
    raw = {"user_data": "#!/bin/sh\n", "user_data_format": "RAW"}
    assert (
        sud.text(raw, STACK["tenant"], CONFIGS.software_configs)
        == "#!/bin/sh\n"
    )
    assert (
        sud.text(
            {"user_data_format": "RAW"},
            STACK["tenant"],
            CONFIGS.software_configs,
        )
        == ""
    )
