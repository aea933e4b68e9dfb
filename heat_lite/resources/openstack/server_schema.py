"""The property and attribute schemas of OS::Nova::Server (Heat 27's)."""

from heat_lite.resources import constraints
from heat_lite.resources import properties as p


def _custom(name):
    return [constraints.CustomConstraint(name)]


NETWORK_SCHEMA = {
    "uuid": p.Schema(
        p.STRING,
        "ID of network to create a port on (deprecated: use network).",
        constraints=_custom("neutron.network"),
    ),
    "network": p.Schema(
        p.STRING,
        "Name or ID of network to create a port on.",
        constraints=_custom("neutron.network"),
    ),
    "allocate_network": p.Schema(
        p.STRING,
        "The special string values of network, auto: means "
        "either a network that is already available to the project will "
        "be used, or if one does not exist, will be automatically created "
        "for the project; none: means no networking will be allocated for "
        "the created server. This property can not be used with other "
        "network keys.",
        update_allowed=True,
        constraints=[constraints.AllowedValues(["none", "auto"])],
    ),
    "fixed_ip": p.Schema(
        p.STRING,
        "Fixed IP address to specify for the "
        "port created on the requested network.",
        constraints=_custom("ip_addr"),
    ),
    "port": p.Schema(
        p.STRING,
        "ID of an existing port to associate with this server.",
        constraints=_custom("neutron.port"),
    ),
    "subnet": p.Schema(
        p.STRING,
        "Subnet in which to allocate the IP "
        "address for port (not supported yet).",
    ),
    "floating_ip": p.Schema(
        p.STRING, "ID of the floating IP to associate (not supported yet)."
    ),
    "tag": p.Schema(
        p.STRING,
        "Port tag. Heat ignores any update on this "
        "property as nova does not support it.",
    ),
}

PROPERTIES = {
    "name": p.Schema(p.STRING, "Server name.", update_allowed=True),
    "image": p.Schema(
        p.STRING,
        "The ID or name of the image to boot with.",
        update_allowed=True,
        constraints=_custom("glance.image"),
    ),
    "flavor": p.Schema(
        p.STRING,
        "The ID or name of the flavor to boot onto.",
        required=True,
        update_allowed=True,
        constraints=_custom("nova.flavor"),
    ),
    "flavor_update_policy": p.Schema(
        p.STRING,
        "Policy on how to apply a flavor update; either by "
        "requesting a server resize or by replacing the entire server.",
        default="RESIZE",
        update_allowed=True,
        constraints=[constraints.AllowedValues(["RESIZE", "REPLACE"])],
    ),
    "image_update_policy": p.Schema(
        p.STRING,
        "Policy on how to apply an image-id update; either by "
        "requesting a server rebuild or by replacing the entire server.",
        default="REBUILD",
        update_allowed=True,
        constraints=[
            constraints.AllowedValues(
                ["REBUILD", "REPLACE", "REBUILD_PRESERVE_EPHEMERAL"]
            )
        ],
    ),
    "key_name": p.Schema(
        p.STRING,
        "Name of keypair to inject into the server.",
        constraints=_custom("nova.keypair"),
    ),
    "availability_zone": p.Schema(
        p.STRING, "Name of the availability zone for server placement."
    ),
    "security_groups": p.Schema(
        p.LIST,
        "List of security group names or IDs. Cannot be used if "
        "neutron ports are associated with this server; assign security "
        "groups to the ports instead.",
        default=[],
    ),
    "networks": p.Schema(
        p.LIST,
        "An ordered list of nics to be added to this server, "
        "with information about connected networks, fixed ips, port "
        "etc.",
        schema=p.Schema(p.MAP, schema=NETWORK_SCHEMA),
        update_allowed=True,
    ),
    "scheduler_hints": p.Schema(
        p.MAP,
        "Arbitrary key-value pairs "
        "specified by the client to help boot a "
        "server.",
    ),
    "metadata": p.Schema(
        p.MAP,
        "Arbitrary key/value metadata to store for this server. "
        "Both keys and values must be 255 characters or less. "
        "Non-string values will be serialized to JSON (and the "
        "serialized string must be 255 characters or less).",
        default={},
        update_allowed=True,
    ),
    "user_data_format": p.Schema(
        p.STRING,
        "How the user_data should be formatted for the server.",
        default="HEAT_CFNTOOLS",
        constraints=[
            constraints.AllowedValues(
                ["HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG"]
            )
        ],
    ),
    "software_config_transport": p.Schema(
        p.STRING,
        "How the server should receive the metadata required "
        "for software configuration.",
        default="POLL_SERVER_CFN",
        update_allowed=True,
        constraints=[
            constraints.AllowedValues(
                [
                    "POLL_SERVER_CFN",
                    "POLL_SERVER_HEAT",
                    "POLL_TEMP_URL",
                    "ZAQAR_MESSAGE",
                ]
            )
        ],
    ),
    "user_data_update_policy": p.Schema(
        p.STRING,
        "Policy on how to apply a user_data update; by "
        "ignoring it, by replacing the entire server, or rebuild the "
        "server.",
        default="REPLACE",
        update_allowed=True,
        constraints=[
            constraints.AllowedValues(["REPLACE", "IGNORE", "REBUILD"])
        ],
    ),
    "user_data": p.Schema(
        p.STRING,
        "User data script to be executed by cloud-init or "
        "CoreOS ignition. Changes cause replacement of the resource by "
        "default, but can be ignored altogether by setting the "
        "`user_data_update_policy` property.",
        default="",
        update_allowed=True,
    ),
    "reservation_id": p.Schema(
        p.STRING, "A UUID for the set of servers being requested."
    ),
    "config_drive": p.Schema(
        p.BOOLEAN, "If True, enable config drive on the server."
    ),
    "diskConfig": p.Schema(
        p.STRING,
        "Control how the disk is partitioned when the server is created.",
        constraints=[constraints.AllowedValues(["AUTO", "MANUAL"])],
    ),
    "admin_pass": p.Schema(
        p.STRING, "The administrator password for the server."
    ),
    "tags": p.Schema(p.LIST, "Server tags.", update_allowed=True),
}
ATTRIBUTES = {
    "name": p.Attribute("Name of the server.", "STRING"),
    "addresses": p.Attribute(
        "A dict of all network addresses with corresponding port_id and "
        "subnets. Each network will have two keys in dict, they are "
        "network name and network id.",
        "MAP",
    ),
    "networks": p.Attribute(
        'A dict of assigned network addresses of the form: {"public": '
        '[ip1, ip2...], "private": [ip3, ip4], "public_uuid": [ip1, '
        'ip2...], "private_uuid": [ip3, ip4]}. Each network will have '
        "two keys in dict, they are network name and network id.",
        "MAP",
    ),
    "first_address": p.Attribute(
        "Convenience attribute to fetch the first assigned network "
        "address, or an empty string if nothing has been assigned at "
        "this time.",
        "STRING",
    ),
    "instance_name": p.Attribute("AWS compatible instance name.", "STRING"),
    "accessIPv4": p.Attribute(
        "The manually assigned alternative public IPv4 address of the server.",
        "STRING",
    ),
    "accessIPv6": p.Attribute(
        "The manually assigned alternative public IPv6 address of the server.",
        "STRING",
    ),
    "tags": p.Attribute("Tags from the server.", "LIST"),
}
