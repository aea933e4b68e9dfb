"""Capped, backed-off re-drives of stalled nodes.

The watchdog re-drives the ready nodes of a traversal that made no
progress for ``stall_timeout``. A node that stays stalled is re-driven
again only after a wait that doubles each time (from ``stall_timeout``
up to ``node_redrive_backoff_max``), and after ``node_redrive_limit``
re-drives it fails visibly -- the record FAILED with a reason and an
event, the stack failed or rolled back -- instead of being re-driven
every watchdog tick forever. The counts live in the node's sync point,
so the cap holds whichever engines do the re-driving.
"""

import datetime
import logging

from heat_lite import conf
from heat_lite.common import exception
from heat_lite.db import models, redrives

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def backoff(count):
    """Seconds to wait after the ``count``-th re-drive of a node."""
    base = CONF.engine.stall_timeout
    return min(
        base * 2 ** max(count - 1, 0), CONF.engine.node_redrive_backoff_max
    )


def _at_hook(hook, traversal):
    return bool(hook) and hook.endswith(" pending") and traversal in hook


class RedriveLimiter:
    """Decides which stalled nodes are re-driven now; fails the rest
    that reached the limit. Needs the dispatcher's ``runner``."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def admit(self, stack, nodes):
        """Of ``nodes`` (stalled resource nodes of the stack's current
        traversal; the joins are idempotent and not counted), the
        ones to re-drive now, plus the nodes that failing others made
        ready. Each admitted node is claimed (counted) first."""
        if not nodes:
            return []
        traversal = stack["current_traversal"]
        state = redrives.redrive_state(traversal)
        now = models.utcnow()
        admitted = []
        for node in nodes:
            count, last, hook = state.get((node[2], node[3]), (0, None, None))
            if last is not None and now < last + datetime.timedelta(
                seconds=backoff(count)
            ):
                continue
            at_hook = _at_hook(hook, traversal)
            if count >= CONF.engine.node_redrive_limit and not at_hook:
                admitted += self._give_up(node, count)
            elif redrives.redrive_claim(
                # Waiting at a hook is no stall: counted, those re-drives
                # failed the node at once when the hook was cleared and
                # its next step was slow (a loaded machine).
                traversal,
                node[2],
                node[3],
                count,
                now,
                counted=not at_hook,
            ):
                admitted.append(node)
        return admitted

    def _give_up(self, node, count):
        """Fail a node re-driven ``count`` times without progress."""
        if not redrives.redrive_claim(
            node[1], node[2], node[3], count, models.utcnow()
        ):
            return []  # another engine gives up on it
        LOG.warning(
            "Node %s/%s of stack %s made no progress after %d "
            "re-drives; failing it",
            node[2],
            node[3],
            node[0],
            count,
        )
        return self.dispatcher.runner.fail_node(
            *node, exception.NodeStalled(count=count), logged=True
        )
