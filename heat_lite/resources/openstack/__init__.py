"""Resource types that act in an OpenStack cloud, one module per service,
through openstacksdk connections from ``client``."""
