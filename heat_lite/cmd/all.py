"""heat-lite-all: API and engine in one process (the embedded mode).

Defaults: an SQLite file in the user's data directory, migrated on start;
the in-process ``fake://`` transport (no broker, no network connection but
the API's listening socket); the API on 127.0.0.1:8004 with noauth. Every
default can be changed with --config-file. One heat-lite-all per SQLite
file: a second one on the same file refuses to start.
"""

import logging
import signal
import sys

from heat_lite.cmd import common

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


@common.reports_startup_errors
def main(argv=None):
    common.parse_args(argv)
    common.enable_counters("all")
    from heat_lite.api import app
    from heat_lite.cmd import preflight, wsgi
    from heat_lite.db import migration
    from heat_lite.engine import process

    if preflight.uses_broker():
        preflight.check_broker()
    preflight.check_database()
    lock = preflight.lock_sqlite_file()  # noqa: F841 - held until exit
    server = wsgi.make_server(app.setup_app())
    preflight.listen(server)
    migration.upgrade()
    engine = process.EngineProcess(binary="heat-lite-all")
    engine.start()
    print(
        _BANNER.format(
            host=CONF.api.bind_host,
            port=CONF.api.bind_port,
            db=CONF.database.connection,
        ),
        flush=True,
    )

    def _terminate(signum, frame):
        # Leave the server loop (in the main thread) to stop gracefully.
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminate)
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        engine.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
