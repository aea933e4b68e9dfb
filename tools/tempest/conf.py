"""``etc/tempest.conf`` for the test cloud (pure: text in, text out).

heat-tempest-plugin's tests log in with the static users of
``[heat_plugin]`` (the cloud's non-admin ``demo`` and its ``admin``), not
tempest's dynamic credentials; tempest's own sections only have to let it
load (identity v3 only, the services the cloud has). The image, flavors
and networks are the ones ``tools.minicloud.seed`` makes.
"""

import configparser
import io

from tools.minicloud import seed

# The cloud offers these; anything else (cinder, swift, aodh, zaqar,
# octavia, barbican, ...) is absent and the plugin's tests that need it
# are in expected_failures.txt or skip themselves.
AVAILABLE = ("heat", "nova", "neutron", "glance")
ABSENT = ("cinder", "swift", "horizon")


def values(auth_url, password, region="RegionOne", build_timeout=300):
    """{section: {option: value}} of tempest.conf for one cloud."""
    auth = {
        "auth_url": auth_url,
        "auth_version": "3",
        "user_domain_name": "Default",
        "project_domain_name": "Default",
        "region": region,
    }
    plugin = dict(
        auth,
        username="demo",
        password=password,
        project_name="demo",
        admin_username="admin",
        admin_password=password,
        admin_project_name="admin",
        instance_type=seed.FLAVOR_BIG,
        minimal_instance_type=seed.FLAVOR,
        image_ref=seed.IMAGE,
        minimal_image_ref=seed.IMAGE,
        fixed_network_name=seed.NETWORK,
        fixed_subnet_name=seed.SUBNET,
        network_for_ssh=seed.NETWORK,
        floating_network_name=seed.PUBLIC,
        build_interval="2",
        build_timeout=str(build_timeout),
        # No ssh into the fake driver's guests: keep the waits short.
        connectivity_timeout="30",
        ssh_timeout="30",
        convergence_engine_enabled="true",
    )
    service = {name: "true" for name in AVAILABLE}
    service.update({name: "false" for name in ABSENT})
    return {
        "DEFAULT": {"log_file": "tempest.log", "use_stderr": "false"},
        "auth": {
            "use_dynamic_credentials": "false",
            "admin_username": "admin",
            "admin_password": password,
            "admin_project_name": "admin",
            "admin_domain_name": "Default",
        },
        "identity": {
            "uri_v3": auth_url,
            "auth_version": "v3",
            "region": region,
            "v3_endpoint_type": "public",
        },
        "identity-feature-enabled": {"api_v2": "false"},
        "service_available": service,
        "heat_plugin": plugin,
    }


def render(sections):
    """The INI text of ``{section: {option: value}}``, sections in order."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep option names as given
    for name, options in sections.items():
        if name != "DEFAULT":
            parser.add_section(name)
        for key, value in options.items():
            parser.set(name, key, value)
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()
