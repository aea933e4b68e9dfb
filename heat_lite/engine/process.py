"""One engine process: RPC servers for the engine and worker topics, the
node runner, the poll scheduler and the recovery watchdog, wired up."""

import logging
import os
import socket
import uuid

from heat_lite import conf
from heat_lite.common import crypt, rpc
from heat_lite.db import api as db_api
from heat_lite.engine import (
    check,
    dispatch,
    graphs,
    nested,
    recovery,
    rpcapi,
    service,
    stacks,
    worker,
)
from heat_lite.resources import registry, stack_resource

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class EngineProcess:
    """Everything one engine process runs, with start/stop."""

    def __init__(self, binary="heat-lite-engine"):
        self.engine_id = str(uuid.uuid4())
        self.binary = binary
        threads = CONF.engine.executor_threads
        self.scheduler = dispatch.Scheduler(threads)
        self.dispatcher = dispatch.Dispatcher(
            rpcapi.WorkerAPI(), self.scheduler
        )
        self.ops = stacks.StackOps(self.dispatcher)
        self.runner = check.NodeRunner(
            self.engine_id, self.ops, graphs.GraphCache(), self.dispatcher
        )
        self.dispatcher.runner = self.runner
        self.watchdog = recovery.Watchdog(
            self.engine_id, self.ops, self.dispatcher
        )
        # Plugins that own a child stack reach the engine through this.
        stack_resource.StackResource.nested_stacks = nested.NestedStacks(
            self.ops
        )
        self._servers = []

    def start(self):
        crypt.check_key()
        types = registry.load()
        LOG.info(
            "Engine %s (pid %d) with %d resource types",
            self.engine_id,
            os.getpid(),
            len(types),
        )
        host = CONF.host or socket.gethostname()
        db_api.service_create(
            {
                "engine_id": self.engine_id,
                "host": host,
                "hostname": socket.gethostname(),
                "binary": self.binary,
                "topic": CONF.engine.topic,
                "pid": os.getpid(),
                "report_interval": CONF.engine.heartbeat_interval,
            }
        )
        threads = CONF.engine.executor_threads
        self._servers = [
            rpc.get_server(
                CONF.engine.topic,
                self.engine_id,
                [service.EngineService(self.ops)],
                threads,
            ),
            rpc.get_server(
                CONF.engine.worker_topic,
                self.engine_id,
                [worker.WorkerEndpoint(self.dispatcher)],
                threads,
            ),
        ]
        for server in self._servers:
            server.start()
        self.watchdog.start()

    def stop(self):
        self.watchdog.stop()
        for server in self._servers:
            server.stop()
        for server in self._servers:
            server.wait()
        self.scheduler.stop()
        try:
            db_api.service_delete(self.engine_id)
        except Exception:  # noqa: BLE001 - best effort on shutdown
            LOG.exception("Could not unregister engine %s", self.engine_id)
