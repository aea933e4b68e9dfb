"""Start-up shared by the commands: config, logging, warnings."""

import functools
import os
import sys
import warnings

from oslo_config import cfg

# oslo.messaging imports oslo.service, which imports eventlet; heat_lite
# never uses eventlet (threads only, nothing is monkey-patched). Its green
# DNS resolver would import dnspython (about 0.2 s of every start) for
# nothing; eventlet's own switch turns that off unless the operator set it.
os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")

# The oslo libraries import eventlet (and their own eventlet helpers) only
# to warn that they are deprecated; heat_lite never uses eventlet. Those
# warnings are silenced while the libraries are imported, here, and
# nowhere else: the process's warning filters stay as Python sets them.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")
    warnings.filterwarnings(
        "ignore", category=DeprecationWarning, module=r"oslo_|webob"
    )
    from oslo_log import log as logging
    from oslo_messaging import opts as messaging_opts

    from heat_lite import conf, version
    from heat_lite.cmd import preflight
    from heat_lite.conf import database

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
    _size_rpc_pools()
    logging.setup(CONF, "heat_lite", version=version.version_string())


def _size_rpc_pools():
    """oslo.messaging gives each RPC server a pool of ``[DEFAULT]
    executor_thread_pool_size`` threads; an engine's is ``[engine]
    executor_threads``. Set here, by the command, once the configuration
    is read (the option is registered as oslo.messaging lists it)."""
    for group, opts in messaging_opts.list_opts():
        if group in (None, "DEFAULT"):
            CONF.register_opts(
                [o for o in opts if o.name == "executor_thread_pool_size"]
            )
    CONF.set_override(
        "executor_thread_pool_size", CONF.engine.executor_threads
    )


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
