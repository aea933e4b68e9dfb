"""heat-lite-all: API and engine in one process (the embedded mode).

Defaults: an SQLite file in the user's data directory, migrated on start;
the in-process ``fake://`` transport; the API on 127.0.0.1:8004 with
noauth. Every default can be changed with --config-file.
"""

import logging
import os
import signal
import sys

from heat_lite.cmd import common
from heat_lite.conf import paths

CONF = common.CONF
LOG = logging.getLogger(__name__)

_BANNER = """\
heat_lite is running (API and engine in one process).

  Endpoint:  http://{host}:{port}/v1/<project>
  Database:  {db}

Try it with python-openstackclient and python-heatclient:

  openstack --os-auth-type none \\
      --os-endpoint http://{host}:{port}/v1/demo \\
      stack create -t template.yaml --wait mystack
"""


def main(argv=None):
    common.parse_args(argv)
    common.enable_counters("all")
    if not CONF.transport_url:
        CONF.set_default("transport_url", "fake://")
    os.makedirs(paths.data_dir(), exist_ok=True)
    from heat_lite.api import app
    from heat_lite.cmd import wsgi
    from heat_lite.db import migration
    from heat_lite.engine import process
    migration.upgrade()
    engine = process.EngineProcess(binary="heat-lite-all")
    engine.start()
    server = wsgi.make_server(app.setup_app())
    print(_BANNER.format(host=CONF.api.bind_host, port=CONF.api.bind_port,
                         db=CONF.database.connection), flush=True)

    def _terminate(signum, frame):
        # Leave the server loop (in the main thread) to stop gracefully.
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminate)
    try:
        server.safe_start()
    finally:
        server.stop()
        engine.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
