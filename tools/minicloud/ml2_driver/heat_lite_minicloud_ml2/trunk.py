"""A trunk driver for the test cloud's mechanism driver.

Neutron's trunk service plugin refuses to load unless a loaded trunk
driver claims the deployment (stock ones exist for Open vSwitch and OVN
only, both tied to their own mechanism drivers and agents). This one
claims ports bound by ``heat_lite_bind_all``: agentless, VLAN subports,
and trunks may be made on ports already bound (a server booted on the
parent). Nothing is wired anywhere; trunks stay in status DOWN, which
Heat counts as built.
"""

from neutron.services.trunk.drivers import base
from neutron_lib.api.definitions import portbindings
from neutron_lib.services.trunk import constants as trunk_consts
from oslo_config import cfg

NAME = "heat_lite_bind_all"


class BindAllTrunkDriver(base.DriverBase):
    """Accept trunks on every port the bind-all driver binds."""

    @property
    def is_loaded(self):
        try:
            return NAME in cfg.CONF.ml2.mechanism_drivers
        except cfg.NoSuchOptError:
            return False


def register():
    """Make the driver; it subscribes itself to the trunk plugin's init."""
    return BindAllTrunkDriver(
        NAME,
        (portbindings.VIF_TYPE_OVS,),
        (trunk_consts.SEGMENTATION_TYPE_VLAN,),
        agent_type=None,
        can_trunk_bound_port=True,
    )
