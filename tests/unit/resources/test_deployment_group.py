"""Heat's old names of the deployment groups: they work, and the type
list leaves them out as Heat (HIDDEN) does."""

from heat_lite.common import context
from heat_lite.engine.endpoint import catalog
from heat_lite.resources import deployment_group, registry


def test_old_names_are_the_groups_but_not_listed():
    types = registry.load()
    for old, new in (
        ("OS::Heat::SoftwareDeployments", "OS::Heat::SoftwareDeploymentGroup"),
        (
            "OS::Heat::StructuredDeployments",
            "OS::Heat::StructuredDeploymentGroup",
        ),
    ):
        assert issubclass(types[old], types[new])
        assert types[old].member_type == types[new].member_type
    listed = catalog.CatalogEndpoint().list_resource_types(
        context.get_admin_context()
    )
    assert "OS::Heat::SoftwareDeploymentGroup" in listed
    assert "OS::Heat::SoftwareDeployments" not in listed
    assert "OS::Heat::StructuredDeployments" not in listed
    assert deployment_group.SoftwareDeployments.hidden_type
