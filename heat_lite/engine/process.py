"""One engine process: RPC servers for the engine and worker topics, the
node runner, the poll scheduler and the recovery watchdog, wired up."""

import logging
import os
import socket
import time

from heat_lite import conf
from heat_lite.common import crypt, rpc
from heat_lite.db import services as db_services
from heat_lite.engine import cloud, plugin_services, rpcapi
from heat_lite.engine.drift import detect as drift_detect
from heat_lite.engine.drift import periodic as drift_periodic
from heat_lite.engine.endpoint import goals, service, snapshots
from heat_lite.engine.fleet.app import deploy as app_deploy
from heat_lite.engine.fleet.app import driver as build_driver
from heat_lite.engine.fleet.app import runner as build_runner
from heat_lite.engine.fleet.promotion import driver as promotion_driver
from heat_lite.engine.fleet.promotion import runner as promotion_runner
from heat_lite.engine.fleet.retention import runner as retention_runner
from heat_lite.engine.fleet.retention import store as retention_store
from heat_lite.engine.fleet.retention import sweep
from heat_lite.engine.fleet.rollout import runner as rollout_runner
from heat_lite.engine.fleet.rollout import target as rollout_target
from heat_lite.engine.recovery import fencing, watchdog
from heat_lite.engine.traversal import graph_cache, ops, queue, verify
from heat_lite.engine.worker import dispatch, runner
from heat_lite.engine.worker import endpoint as worker_endpoint
from heat_lite.resources import registry

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class EngineProcess:
    """Everything one engine process runs, with start/stop.

    :param worker_index: which worker of its host this is (0 for a single
        engine); with the host and ``binary`` it makes the engine's stable
        identity (``fencing.stable_engine_id``).
    """

    def __init__(self, binary="heat-lite-engine", worker_index=0):
        self.binary = binary
        host = CONF.host or socket.gethostname()
        self.fence = fencing.Fence(
            fencing.stable_engine_id(host, binary, worker_index),
            {
                "host": host,
                "hostname": socket.gethostname(),
                "binary": binary,
                "topic": CONF.engine.topic,
                "report_interval": CONF.engine.heartbeat_interval,
            },
        )
        threads = CONF.engine.executor_threads
        self.scheduler = dispatch.Scheduler(threads)
        self.dispatcher = dispatch.Dispatcher(
            rpcapi.WorkerAPI(), self.scheduler
        )
        self.ops = ops.StackOps(self.dispatcher, snapshots.Snapshots())
        # What plugins may ask of the engine: one object, given to
        # everything that makes plugin instances.
        self.services = plugin_services.EngineServices(self.ops)
        self.runner = runner.NodeRunner(
            self.fence,
            self.ops,
            graph_cache.GraphCache(),
            self.dispatcher,
            self.services,
        )
        # The three cycles left: the dispatcher runs nodes with the runner,
        # which schedules its polls through the dispatcher; StackOps asks
        # the verifier to hold a cleanup, the verifier resumes it there.
        self.dispatcher.runner = self.runner
        self.ops.verifier = verify.Verifier(
            self.ops, self.runner.graphs, self.dispatcher, self.services
        )
        self.drift = drift_periodic.Periodic(lambda: self.fence.engine_id)
        update_goals = goals.UpdateGoals()
        # And StackOps starts a stack's next queued update through this.
        self.ops.queue = queue.UpdateQueue(
            self.ops, update_goals, self.services
        )
        self.watchdog = watchdog.Watchdog(
            self.fence, self.ops, self.dispatcher, shares=[self.drift]
        )
        self.heartbeat = fencing.Heartbeat(self.fence, self.runner.drop_all)
        self.service = service.EngineService(
            self.ops, self.services, update_goals
        )
        self.rollouts = rollout_runner.RolloutRunner(
            self.fence, rollout_target.TargetDriver(self.ops, update_goals)
        )
        self.promotions = promotion_runner.PromotionRunner(
            self.fence,
            promotion_driver.PromotionDriver(self.ops, update_goals),
        )
        poll = CONF.apps.build_poll_interval
        builds = build_driver.BuildDriver(
            app_deploy.Deployer(self.ops, update_goals, poll=poll),
            services=self.services,
            poll=poll,
        )
        self.builds = build_runner.BuildRunner(self.fence, builds)
        # Image retention retires what builds made, through their store.
        self.retention = retention_runner.RetentionRunner(
            self.fence,
            sweep.Sweep(
                retention_store.AppImages(lambda: builds.store, self.services)
            ),
        )
        self._servers = []

    @property
    def engine_id(self):
        return self.fence.engine_id

    def start(self):
        crypt.check_key()
        types = registry.load()
        self.fence.values["pid"] = os.getpid()
        self.fence.register()
        LOG.info(
            "Engine %s epoch %s (pid %d) with %d resource types, serving "
            "engine RPC %s and worker RPC %s (sending at most %s / %s: "
            "[upgrade_levels])",
            self.engine_id,
            self.fence.epoch,
            os.getpid(),
            len(types),
            rpcapi.RPC_API_VERSION,
            rpcapi.WORKER_API_VERSION,
            CONF.upgrade_levels.engine or rpcapi.RPC_API_VERSION,
            CONF.upgrade_levels.worker or rpcapi.WORKER_API_VERSION,
        )
        self._servers = [
            rpc.get_server(
                CONF.engine.topic,
                self.engine_id,
                service.endpoints(
                    self.ops,
                    self.services,
                    stack_service=self.service,
                    rollouts=self.rollouts,
                    promotions=self.promotions,
                ),
            ),
            rpc.get_server(
                CONF.engine.worker_topic,
                self.engine_id,
                [
                    worker_endpoint.WorkerEndpoint(
                        self.dispatcher, drift_detect.Detector(self.services)
                    )
                ],
            ),
            rpc.get_server(
                CONF.apps.builder_topic,
                self.engine_id,
                [build_runner.BuilderEndpoint(self.builds)],
            ),
        ]
        for server in self._servers:
            server.start()
        # openstacksdk imported now, not by the first cloud action.
        cloud.side().warm_up()
        self.heartbeat.start()
        self.watchdog.start()
        self.rollouts.start()
        self.promotions.start()
        self.builds.start()
        self.retention.start()

    def stop(self):
        """Stop gracefully: take no new work (nodes received or made ready
        from now on are cast to the other engines), let running actions
        finish for up to ``graceful_shutdown_timeout`` seconds, hand the
        rest over (their locks released and their nodes cast, so another
        engine re-drives them at once) and unregister."""
        LOG.info("Engine %s stopping", self.engine_id)
        self.dispatcher.draining = True
        # The worker topic stops at once: no new resource checks. The
        # engine topic keeps answering the API until the process exits:
        # stopping an oslo.messaging RPC server loses a call that arrives
        # meanwhile, whereas the broker re-queues what an exiting process
        # had not acknowledged.
        worker_server = self._servers[1]
        worker_server.stop()
        worker_server.wait()
        deadline = time.monotonic() + CONF.engine.graceful_shutdown_timeout
        while self.runner.active_records() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.watchdog.stop()
        builder_server = self._servers[2]
        builder_server.stop()
        builder_server.wait()
        self.rollouts.stop()
        self.promotions.stop()
        self.builds.stop()
        self.retention.stop()
        self.fence.retire()
        self.runner.drop_all()
        try:
            self.dispatcher.cast(self.watchdog.hand_over())
        except Exception:  # noqa: BLE001 - the others take them over
            LOG.exception(
                "Engine %s could not hand over its work", self.engine_id
            )
        self.heartbeat.stop()
        self.scheduler.stop()
        try:
            db_services.service_delete(self.engine_id, self.fence.epoch)
        except Exception:  # noqa: BLE001 - best effort on shutdown
            LOG.exception("Could not unregister engine %s", self.engine_id)
        LOG.info("Engine %s stopped", self.engine_id)
