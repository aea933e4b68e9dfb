"""heat-lite-api: the REST API, talking to engines over RPC."""

import logging
import sys

from heat_lite.cmd import common

CONF = common.CONF
LOG = logging.getLogger(__name__)


@common.reports_startup_errors
def main(argv=None):
    common.parse_args(argv)
    common.enable_counters("api")
    from heat_lite.api import app
    from heat_lite.cmd import preflight, wsgi

    preflight.require_broker()
    preflight.check_broker()
    server = wsgi.make_server(app.setup_app())
    preflight.listen(server)
    LOG.info(
        "heat_lite API listening on http://%s:%d (auth: %s)",
        CONF.api.bind_host,
        CONF.api.bind_port,
        CONF.api.auth_strategy,
    )
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
