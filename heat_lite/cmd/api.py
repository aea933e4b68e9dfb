"""heat-lite-api: the REST API, talking to engines over RPC."""

import logging
import sys

from heat_lite.cmd import common

CONF = common.CONF
LOG = logging.getLogger(__name__)


def main(argv=None):
    common.parse_args(argv)
    common.enable_counters("api")
    from heat_lite.api import app
    from heat_lite.cmd import wsgi
    server = wsgi.make_server(app.setup_app())
    LOG.info("heat_lite API listening on http://%s:%d (auth: %s)",
             CONF.api.bind_host, CONF.api.bind_port,
             CONF.api.auth_strategy)
    try:
        server.safe_start()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
