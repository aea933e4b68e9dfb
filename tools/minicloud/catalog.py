"""Keystone's contents for the test cloud, made with openstacksdk.

After ``keystone-manage bootstrap`` (admin user, admin project, identity
endpoints): the ``service`` project and one user per service, the other
services' endpoints, the roles Heat's deployments use, a non-admin
``demo`` user on a ``demo`` project, and optionally the
``orchestration`` endpoint of a heat_lite (``register_orchestration``).
"""

import openstack
import openstack.config
import openstack.connection
import yaml

from tools.minicloud import layout as layout_mod

# ``heat`` is heat_lite's own service user in keystone mode: it validates
# tokens (keystone_authtoken) and is the trustee of each stack's trust.
SERVICE_USERS = ("glance", "placement", "neutron", "nova", "heat")
# (name, type, path appended to the service's URL)
SERVICES = (
    ("glance", "image", "glance", ""),
    ("placement", "placement", "placement", ""),
    ("neutron", "network", "neutron", ""),
    ("nova", "compute", "nova", "/v2.1"),
)
EXTRA_ROLES = ("service", "heat_stack_owner", "heat_stack_user")
INTERFACES = ("public", "internal", "admin")
DEMO = "demo"


def connect(layout, user="admin", project="admin"):
    """A Connection as ``user``, from the layout alone: neither
    ``OS_*`` variables nor a ``clouds.yaml`` of the caller's (the README
    exports ``OS_CLOUD=minicloud-demo`` before ``minicloud stop``)."""
    config = openstack.config.OpenStackConfig(
        load_yaml_config=False, load_envvars=False
    ).get_one(region_name=layout_mod.REGION, **layout.auth(user, project))
    return openstack.connection.Connection(config=config)


def _endpoints(conn, service, url):
    for interface in INTERFACES:
        conn.identity.create_endpoint(
            service_id=service.id,
            interface=interface,
            url=url,
            region_id=layout_mod.REGION,
        )


def register(layout):
    """Everything but the identity service, which bootstrap made."""
    conn = connect(layout)
    ident = conn.identity
    service_project = ident.create_project(name="service", domain_id="default")
    admin_role = ident.find_role("admin")
    roles = {
        name: ident.find_role(name) or ident.create_role(name=name)
        for name in EXTRA_ROLES
    }
    for name in SERVICE_USERS:
        user = ident.create_user(
            name=name, password=layout.password, domain_id="default"
        )
        for role in (admin_role, roles["service"]):
            ident.assign_project_role_to_user(service_project, user, role)
    for name, stype, port_of, path in SERVICES:
        service = ident.create_service(name=name, type=stype)
        _endpoints(conn, service, layout.url(port_of) + path)
    demo_project = ident.create_project(name=DEMO, domain_id="default")
    demo = ident.create_user(
        name=DEMO,
        password=layout.password,
        domain_id="default",
        default_project_id=demo_project.id,
    )
    ident.assign_project_role_to_user(
        demo_project, demo, ident.find_role("member")
    )
    if layout.orchestration_url:
        register_orchestration(layout, layout.orchestration_url, conn)
    conn.close()


def unregister_orchestration(layout):
    """Take the ``orchestration`` endpoints out of the catalog."""
    conn = connect(layout)
    try:
        ident = conn.identity
        for service in ident.services():
            if service.type == "orchestration":
                for endpoint in ident.endpoints(service_id=service.id):
                    ident.delete_endpoint(endpoint)
    finally:
        conn.close()
    layout.orchestration_url = ""
    layout.save()


def register_orchestration(layout, url, conn=None):
    """Point the catalog's ``orchestration`` service at ``url`` (a
    heat_lite API root such as http://127.0.0.1:8004), replacing any
    earlier endpoints of it."""
    own = conn is None
    conn = conn or connect(layout)
    ident = conn.identity
    service = next(
        (s for s in ident.services() if s.type == "orchestration"), None
    )
    if service is None:
        service = ident.create_service(name="heat_lite", type="orchestration")
    for endpoint in ident.endpoints(service_id=service.id):
        ident.delete_endpoint(endpoint)
    _endpoints(conn, service, url.rstrip("/") + "/v1/%(tenant_id)s")
    layout.orchestration_url = url
    layout.save()
    if own:
        conn.close()


def write_clouds_yaml(layout):
    """``<dir>/clouds.yaml`` with clouds ``minicloud-admin`` and
    ``minicloud-demo`` (for ``openstack --os-cloud`` and openstacksdk)."""
    clouds = {
        "minicloud-%s" % user: {
            "auth": layout.auth(user, user),
            "region_name": layout_mod.REGION,
            "identity_api_version": 3,
        }
        for user in ("admin", DEMO)
    }
    with open(layout.clouds_yaml, "w") as f:
        yaml.safe_dump({"clouds": clouds}, f, default_flow_style=False)
