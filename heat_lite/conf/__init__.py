"""The global oslo.config object with every heat_lite option registered."""

import oslo_messaging
from oslo_config import cfg
from oslo_messaging import transport as messaging_transport

from heat_lite.conf import (
    api,
    database,
    engine,
    limits,
    openstack,
    remote_stack,
    resources,
)

CONF = cfg.CONF

EMBEDDED_TRANSPORT = "fake://"

# Every heat_lite option module: registered here, listed by opts.list_opts.
MODULES = (api, database, engine, limits, openstack, remote_stack,
           resources)

for _module in MODULES:
    _module.register_opts(CONF)

# transport_url must be known before the transport is made; oslo.messaging
# registers the same option objects again later, which is a no-op.
CONF.register_opts(messaging_transport._transport_opts)
oslo_messaging.set_transport_defaults("heat_lite")
# oslo.messaging defaults to rabbit:// on localhost: a heat-lite-all with no
# config would hang without a broker, or silently join whatever broker the
# host runs and answer another install's calls. The default is the
# in-process transport; a broker is used only when a config names one
# (heat-lite-api and heat-lite-engine refuse to start without one).
cfg.set_defaults(messaging_transport._transport_opts,
                 transport_url=EMBEDDED_TRANSPORT)
