"""Resource types that act in an OpenStack cloud, one module per service,
through openstacksdk connections from ``client``. Loading any of them
registers the custom constraints that ask the cloud
(``cloud_constraints``)."""

from heat_lite.resources.openstack import cloud_constraints

cloud_constraints.register()
