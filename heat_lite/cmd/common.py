"""Start-up shared by the commands: config, logging, warnings."""

import functools
import os
import sys
import warnings

# oslo.messaging imports oslo.service, which imports eventlet; heat_lite
# never uses eventlet (threads only, nothing is monkey-patched). Its green
# DNS resolver would import dnspython (about 0.2 s of every start) for
# nothing; eventlet's own switch turns that off unless the operator set it.
os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")
# oslo libraries import eventlet only to warn that it is deprecated; we
# never use it. Silence that before they are imported.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")

from oslo_config import cfg  # noqa: E402
from oslo_log import log as logging  # noqa: E402

from heat_lite import conf, version  # noqa: E402
from heat_lite.cmd import preflight  # noqa: E402
from heat_lite.conf import database  # noqa: E402

CONF = conf.CONF


def parse_args(argv=None, cli_opts=(), default_config_files=None):
    """Parse --config-file/--config-dir and command-line options."""
    if cli_opts:
        CONF.register_cli_opts(cli_opts)
    CONF(
        sys.argv[1:] if argv is None else argv,
        project="heat_lite",
        version=version.version_string(),
        default_config_files=default_config_files,
    )
    database.set_runtime_default(CONF)
    logging.setup(CONF, "heat_lite", version=version.version_string())


def reports_startup_errors(main):
    """Turn a start-up failure into one line on stderr and exit code 1.

    Only what an operator can fix (a config file, a port, a broker, a
    database) is caught here; anything else is a bug and keeps its
    traceback.
    """

    @functools.wraps(main)
    def wrapper(argv=None):
        try:
            return main(argv)
        except (preflight.StartupError, cfg.Error) as exc:
            binary = os.path.basename(sys.argv[0]) or "heat-lite"
            print("%s: %s" % (binary, exc), file=sys.stderr, flush=True)
            return 1

    return wrapper


def enable_counters(name):
    """Start the cost counters of this process if configured."""
    if CONF.counters_dir:
        from heat_lite.common import counters

        counters.enable(CONF.counters_dir, name)
