"""The global oslo.config object with every heat_lite option registered."""

import oslo_messaging
from oslo_config import cfg
from oslo_messaging import transport as messaging_transport

from heat_lite.conf import (
    api,
    database,
    engine,
    limits,
    remote_stack,
    resources,
)

CONF = cfg.CONF

# Every heat_lite option module: registered here, listed by opts.list_opts.
MODULES = (api, database, engine, limits, remote_stack, resources)

for _module in MODULES:
    _module.register_opts(CONF)

# transport_url must be known before the transport is made (heat-lite-all
# picks fake:// when it is unset); oslo.messaging registers the same
# option objects again later, which is a no-op.
CONF.register_opts(messaging_transport._transport_opts)
oslo_messaging.set_transport_defaults("heat_lite")
