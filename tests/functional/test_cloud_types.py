"""Nova key pairs, server groups and flavors, the Keystone types and
OS::Glance::WebImage against the test cloud. heat-lite-all (noauth) acts
in the cloud as its non-admin ``demo`` user (``[openstack] cloud =
minicloud-demo``), or as ``admin`` for admin-only types (fixtures in
conftest.py). Every check of the cloud's side goes through openstacksdk:
what the stack says exists must exist, and nothing may be left after a
delete.
"""

import pytest

from harness import cloud as cloud_mod
from harness import deployment as deployment_mod
from harness import helpers

# The first test also waits for the cloud: its venv install and start.
pytestmark = [
    pytest.mark.functional,
    pytest.mark.cloud,
    pytest.mark.timeout(1500),
    # Stacks deleted and the cloud checked after each test.
    pytest.mark.usefixtures("cloud_ledger_admin"),
]


def test_key_pair_and_server_group(cloud, heat_on_cloud, cloud_sdk):
    heat = heat_on_cloud.client()
    tmpl = helpers.template(
        {
            "key": {
                "type": "OS::Nova::KeyPair",
                "properties": {
                    "name": "heat-lite-key",
                    "save_private_key": True,
                },
            },
            "group": {
                "type": "OS::Nova::ServerGroup",
                "properties": {"policies": ["anti-affinity"]},
            },
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": cloud.image,
                    "flavor": cloud.flavor,
                    "key_name": {"get_resource": "key"},
                    "scheduler_hints": {"group": {"get_resource": "group"}},
                    "networks": [{"network": cloud.network}],
                },
            },
        },
        outputs={
            "private": {"value": {"get_attr": ["key", "private_key"]}},
            "public": {"value": {"get_attr": ["key", "public_key"]}},
        },
    )
    stack_id = heat.stacks.create(stack_name="keyed", template=tmpl)["stack"][
        "id"
    ]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    assert ids["key"] == "heat-lite-key"
    keypair = cloud_sdk.compute.get_keypair("heat-lite-key")
    outputs = cloud_mod.outputs(heat, stack_id)
    assert outputs["public"] == keypair.public_key
    assert "PRIVATE KEY" in outputs["private"]
    assert (
        cloud_sdk.compute.get_server(ids["server"]).key_name == "heat-lite-key"
    )
    group = cloud_sdk.compute.get_server_group(ids["group"])
    assert (group.policy, group.member_ids) == (
        "anti-affinity",
        [ids["server"]],
    )

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    cloud_mod.wait_gone(lambda: cloud_sdk.compute.find_server(ids["server"]))
    assert cloud_sdk.compute.find_keypair("heat-lite-key") is None
    assert cloud_sdk.compute.find_server_group(ids["group"]) is None


def test_flavor_as_admin_and_refused_to_a_member(
    cloud, heat_as_admin, heat_on_cloud
):
    admin = cloud.connect("admin")
    demo_project = admin.identity.find_project("demo").id

    def tmpl(specs):
        return helpers.template(
            {
                "flavor": {
                    "type": "OS::Nova::Flavor",
                    "properties": {
                        "ram": 128,
                        "vcpus": 1,
                        "disk": 1,
                        "is_public": False,
                        "tenants": [demo_project],
                        "extra_specs": specs,
                    },
                }
            },
            outputs={
                "specs": {"value": {"get_attr": ["flavor", "extra_specs"]}}
            },
        )

    heat = heat_as_admin.client(project="admin")
    stack_id = heat.stacks.create(
        stack_name="flavored", template=tmpl({"hw:cpu_policy": "shared"})
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    flavor_id = cloud_mod.physical(heat, stack_id)["flavor"]
    flavor = admin.compute.get_flavor(flavor_id)
    assert not flavor.is_public
    assert [
        a["tenant_id"] for a in admin.compute.get_flavor_access(flavor_id)
    ] == [demo_project]
    heat.stacks.update(stack_id, template=tmpl({"hw:mem_page_size": "any"}))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id)["flavor"] == flavor_id
    assert admin.compute.fetch_flavor_extra_specs(flavor_id).extra_specs == {
        "hw:mem_page_size": "any"
    }
    assert cloud_mod.outputs(heat, stack_id)["specs"] == {
        "hw:mem_page_size": "any"
    }
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert admin.compute.find_flavor(flavor_id, ignore_missing=True) is None
    admin.close()

    # A member's heat_lite gets Nova's refusal.
    member = heat_on_cloud.client()
    stack_id = member.stacks.create(stack_name="not-mine", template=tmpl({}))[
        "stack"
    ]["id"]
    with pytest.raises(AssertionError) as failed:
        helpers.wait_for_status(
            member, stack_id, "CREATE_COMPLETE", timeout=120
        )
    assert "ForbiddenException: resources.flavor" in str(failed.value)
    member.stacks.delete(stack_id)
    helpers.wait_for_status(member, stack_id, "DELETE_COMPLETE", timeout=120)


def _assigned(admin, **query):
    return sorted(
        (a.role["id"], a.scope["project"]["id"])
        for a in admin.identity.role_assignments(**query)
    )


def test_keystone_types_as_admin(cloud, heat_as_admin):
    admin = cloud.connect("admin")
    member = admin.identity.find_role("member").id
    demo = admin.identity.find_user("demo").id

    def tmpl(user_roles):
        return helpers.template(
            {
                "project": {
                    "type": "OS::Keystone::Project",
                    "properties": {"description": "made by heat_lite"},
                },
                "role": {"type": "OS::Keystone::Role"},
                "group": {
                    "type": "OS::Keystone::Group",
                    "properties": {
                        "roles": [
                            {
                                "role": {"get_resource": "role"},
                                "project": {"get_resource": "project"},
                            }
                        ]
                    },
                },
                "user": {
                    "type": "OS::Keystone::User",
                    "properties": {
                        "password": "s3cret",
                        "groups": [{"get_resource": "group"}],
                        "default_project": {"get_resource": "project"},
                        "roles": [
                            {"role": r, "project": {"get_resource": "project"}}
                            for r in user_roles
                        ],
                    },
                },
                "grant": {
                    "type": "OS::Keystone::UserRoleAssignment",
                    "properties": {
                        "user": "demo",
                        "roles": [
                            {
                                "role": {"get_resource": "role"},
                                "project": {"get_resource": "project"},
                            }
                        ],
                    },
                },
            }
        )

    heat = heat_as_admin.client(project="admin")
    stack_id = heat.stacks.create(
        stack_name="people", template=tmpl(["member"])
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    ids = cloud_mod.physical(heat, stack_id)
    project = admin.identity.get_project(ids["project"])
    assert project.description == "made by heat_lite"
    assert _assigned(admin, user_id=ids["user"]) == [(member, project.id)]
    assert _assigned(admin, group_id=ids["group"]) == [
        (ids["role"], project.id)
    ]
    assert _assigned(admin, user_id=demo, scope_project_id=project.id) == [
        (ids["role"], project.id)
    ]
    assert [g.id for g in admin.identity.user_groups(ids["user"])] == [
        ids["group"]
    ]
    assert (
        admin.identity.get_user(ids["user"]).default_project_id == project.id
    )

    heat.stacks.update(stack_id, template=tmpl([]))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id) == ids
    assert _assigned(admin, user_id=ids["user"]) == []

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert admin.identity.find_project(ids["project"]) is None
    assert admin.identity.find_user(ids["user"]) is None
    assert admin.identity.find_group(ids["group"]) is None
    assert admin.identity.find_role(ids["role"]) is None
    assert _assigned(admin, user_id=demo, scope_project_id=project.id) == []
    admin.close()


def test_web_image_imports_and_updates(
    cloud, heat_on_cloud, cloud_sdk, image_server
):
    def tmpl(tags, extra, location=image_server):
        return helpers.template(
            {
                "image": {
                    "type": "OS::Glance::WebImage",
                    "properties": {
                        "location": location,
                        "disk_format": "raw",
                        "container_format": "bare",
                        "tags": tags,
                        "extra_properties": extra,
                    },
                }
            }
        )

    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="imaged", template=tmpl(["a"], {"purpose": "test"})
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=180)
    image_id = cloud_mod.physical(heat, stack_id)["image"]
    image = cloud_sdk.image.get_image(image_id)
    assert (image.status, image.size, image.tags) == ("active", 4096, ["a"])
    assert image.properties["purpose"] == "test"

    heat.stacks.update(stack_id, template=tmpl(["b"], {"tier": "gold"}))
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=180)
    assert cloud_mod.physical(heat, stack_id)["image"] == image_id
    image = cloud_sdk.image.get_image(image_id)
    assert image.tags == ["b"]
    assert image.properties.get("tier") == "gold"
    assert "purpose" not in image.properties

    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=180)
    assert cloud_sdk.image.find_image(image_id) is None


def test_web_image_import_failure_fails_the_resource(
    cloud, heat_on_cloud, image_server
):
    """Glance leaves a failed import queued; heat_lite says it failed."""
    heat = heat_on_cloud.client()
    stack_id = heat.stacks.create(
        stack_name="no-image",
        template=(
            helpers.template(
                {
                    "image": {
                        "type": "OS::Glance::WebImage",
                        "properties": {
                            "location": "http://127.0.0.1:%d/gone.raw"
                            % deployment_mod.free_port(),
                            "disk_format": "raw",
                            "container_format": "bare",
                        },
                    }
                }
            )
        ),
    )["stack"]["id"]
    with pytest.raises(AssertionError):
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=120)
    reason = heat.resources.get(stack_id, "image").resource_status_reason
    assert reason.startswith(
        "ResourceInError: resources.image: Went to status"
    ), reason
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=120)
