"""A mechanism driver that binds every port, for the test cloud.

The test cloud runs Neutron without agents, so no stock driver can bind
a port and Nova's boot fails with PortBindingFailed. This driver binds
the first segment offered with an OVS VIF and marks the port ACTIVE at
once; nothing is plugged anywhere (the fake virt driver does not wait
for VIF events). Never use it outside a test cloud.
"""

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api

from heat_lite_minicloud_ml2 import trunk


class BindAllDriver(api.MechanismDriver):
    """Bind any port on any host to its first segment."""

    def initialize(self):
        # Before the service plugins load, so the trunk plugin finds it.
        self._trunk_driver = trunk.register()

    @property
    def connectivity(self):
        return portbindings.CONNECTIVITY_L2

    def bind_port(self, context):
        for segment in context.segments_to_bind:
            context.set_binding(
                segment[api.ID],
                portbindings.VIF_TYPE_OVS,
                {portbindings.CAP_PORT_FILTER: False},
                status=constants.PORT_STATUS_ACTIVE,
            )
            return
