"""heat-lite-engine: N engine worker processes on RabbitMQ.

With ``--workers N`` the parent forks N engine processes and restarts any
that dies (a dead engine's work is taken over by the others meanwhile).
"""

import logging
import os
import signal
import sys
import time

from oslo_config import cfg

from heat_lite.cmd import common

CONF = common.CONF
LOG = logging.getLogger(__name__)


def run_one(index=0):
    """Run worker ``index`` (its identity, see
    ``engine.recovery.fencing``) until SIGTERM/SIGINT, then stop it
    gracefully."""
    from heat_lite.engine import process

    common.enable_counters("engine")
    engine = process.EngineProcess(worker_index=index)
    stop = {"requested": False}

    def _handler(signum, frame):
        stop["requested"] = True

    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)
    engine.start()
    try:
        while not stop["requested"]:
            time.sleep(0.2)
    finally:
        engine.stop()


def _spawn(index):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            run_one(index)
        except Exception:  # noqa: BLE001 - child reports and exits
            LOG.exception("Engine process failed")
            code = 1
        os._exit(code)
    return pid


def supervise(workers):
    """Fork ``workers`` engines; restart the ones that die (a restarted
    worker keeps its index, hence its identity)."""
    children = {_spawn(i): i for i in range(workers)}
    stopping = {"now": False}

    def _handler(signum, frame):
        stopping["now"] = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        index = children.pop(pid, None)
        if index is not None and not stopping["now"]:
            LOG.warning(
                "Engine process %d exited (%s); restarting", pid, status
            )
            time.sleep(1)
            children[_spawn(index)] = index


@common.reports_startup_errors
def main(argv=None):
    common.parse_args(
        argv,
        cli_opts=[
            cfg.IntOpt(
                "workers",
                min=1,
                max=64,
                help="Engine worker processes to run "
                "(overrides [engine] workers).",
            )
        ],
    )
    from heat_lite.cmd import preflight

    preflight.require_broker()
    preflight.check_broker()
    preflight.check_database()
    workers = CONF.workers or CONF.engine.workers
    if workers == 1:
        run_one()
    else:
        supervise(workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
