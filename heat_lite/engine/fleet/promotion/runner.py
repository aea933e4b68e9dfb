"""Running promotions: each one's flow on a thread of the engine that
owns it, persisted in our database (``db.flow_store``); a ``Keeper``
takes over those of engines that went down, so a promotion survives an
engine's kill -9 (the flow resumes where its persisted state says, the
driver follows the operation it had recorded)."""

import contextlib
import uuid

from heat_lite.common import exception
from heat_lite.common.states import PROMOTION as P
from heat_lite.db import promotions as db_promotions
from heat_lite.engine.fleet import keeper
from heat_lite.engine.fleet.promotion import driver as driver_mod


class PromotionRunner(keeper.KeptRunner):
    """The promotions of one engine process.

    :param fence: the engine's ``fencing.Fence``.
    :param driver: the ``driver.PromotionDriver``.
    """

    label = "promotion"
    to_run = staticmethod(db_promotions.promotions_to_run)
    claim = staticmethod(db_promotions.promotion_claim)

    def run(self, promotion_id):
        """Run the promotion's flow (or its rollback's) to its end."""
        import taskflow.engines

        from heat_lite.db import flow_store
        from heat_lite.engine.fleet.promotion import flows

        row = db_promotions.promotion_get(promotion_id)
        run = driver_mod.PromotionRun(row, self.fence)
        if row["rollback_requested"]:
            flow = flows.get_promotion_rollback_flow(run, self.driver)
            flow_id = str(uuid.uuid5(uuid.UUID(promotion_id), "rollback"))
        else:
            flow = flows.get_promotion_flow(run, self.driver)
            flow_id = promotion_id
        backend = flow_store.FencedBackend(run.check)
        book, detail = flow_store.flow_detail(backend, flow_id, flow.name)
        engine = taskflow.engines.load(
            flow, flow_detail=detail, book=book, backend=backend
        )
        try:
            engine.run()
            if _reverted(engine):
                # Reverted before a restart, not settled: settle now.
                raise driver_mod.GateFailed("resumed after a restart")
        except (driver_mod.GateFailed, exception.HeatLiteException) as exc:
            # (A typed error -- the target's name taken meanwhile, say --
            # reverted the flow as a failed gate does.)
            if row["rollback_requested"]:
                run.settle(
                    P.COMPLETE,
                    "rollback failed: %s; the target stays promoted" % exc,
                )
            else:
                run.settle(P.FAILED, _failed(run.row, exc))
        finally:
            with contextlib.suppress(Exception):
                backend.close()


def _failed(row, exc):
    undone = (
        "the stack it created was deleted"
        if row["created_target"]
        else "the target rolled back to what it was"
    )
    return "gate failed: %s; %s" % (exc, undone)


def _reverted(engine):
    from taskflow import states

    return engine.storage.get_flow_state() == states.REVERTED
