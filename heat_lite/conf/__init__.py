"""The global oslo.config object with every heat_lite option registered."""

import oslo_messaging
from oslo_config import cfg
from oslo_log import log as oslo_log
from oslo_messaging import transport as messaging_transport

from heat_lite.conf import (
    api,
    apps,
    database,
    drift,
    engine,
    limits,
    openstack,
    plans,
    remote_stack,
    resources,
    retention,
    trustee,
    upgrade_levels,
)

CONF = cfg.CONF

EMBEDDED_TRANSPORT = "fake://"

# Every heat_lite option module: registered here, listed by opts.list_opts.
MODULES = (
    api,
    apps,
    database,
    drift,
    engine,
    limits,
    openstack,
    plans,
    remote_stack,
    resources,
    retention,
    trustee,
    upgrade_levels,
)

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
cfg.set_defaults(
    messaging_transport._transport_opts, transport_url=EMBEDDED_TRANSPORT
)

# Libraries that are chatty at INFO; oslo.log's own list is kept too.
QUIET_LOGGERS = (
    "oslo_messaging",
    "amqp",
    "kombu",
    "stevedore",
    "alembic",
    "oslo_db",
    "cheroot",
    "oslo_policy",
    "keystonemiddleware",
)

# oslo.log's options (log_file, use_syslog, log_config_append, debug, ...);
# the commands call oslo_log.setup once their arguments are parsed. A tool
# that parsed its own command line before loading us through an entry
# point (oslopolicy-sample-generator, oslopolicy-checker) cannot take
# command-line options any more, and needs no logging options of ours.
try:
    oslo_log.register_options(CONF)
except cfg.ArgsAlreadyParsedError:
    pass
_levels = dict(
    item.split("=", 1) for item in oslo_log.get_default_log_levels()
)
_levels.update(dict.fromkeys(QUIET_LOGGERS, "WARN"))
oslo_log.set_defaults(
    default_log_levels=["%s=%s" % item for item in _levels.items()]
)
