"""The owner-side state of one build: its row, its fenced writes, its
log, and the checks between steps (still ours? cancel asked?).

Every write is conditional on this engine life owning the build
(``db.builds``): one that matches no row means another engine took the
build over (this one was claimed as dead), and the run stops
(``keeper.OwnershipLost``) without touching anything else.
"""

import logging
import threading
import time

from heat_lite.common import context
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import builds as db_builds
from heat_lite.db import image_holds, managed_images
from heat_lite.engine.fleet import keeper

LOG = logging.getLogger(__name__)
# Seconds between two reads of the row by ``check`` (owner, cancel).
OWNER_CHECK = 0.5
# Lines of log kept before they are written (and seconds at most).
LOG_LINES = 50
LOG_SECONDS = 1.0


class Cancelled(Exception):
    """A user asked to cancel the build."""


class Superseded(Exception):
    """A newer push of the branch makes this build moot."""


class BuildRun:
    """One build as the engine that owns it sees it.

    :param row: the build row.
    :param app: the app row (spec decoded).
    :param fence: the engine's ``fencing.Fence``.
    """

    def __init__(self, row, app, fence):
        self.id = row["id"]
        self.row = row
        self.app = app
        self.fence = fence
        self.owner = fence.owner
        self.generation = fence.generation
        self.context = context.RequestContext(
            project_id=row["tenant"], user_id=app["username"], overwrite=False
        )
        self._checked = 0.0
        self._lines = []
        self._flushed = time.monotonic()
        self._lock = threading.Lock()
        # Held while a batch is written: the build's thread and the
        # timer's may flush at once, and two appends reading the same
        # last line would write the same sequence number (and the
        # batches could land out of order).
        self._writing = threading.Lock()
        self._timer = None

    # Ownership and cancel ------------------------------------------------
    def check(self, force=False):
        """:param force: read the row now (else at most every
            ``OWNER_CHECK`` seconds).
        :raises OwnershipLost: once this engine no longer owns it.
        :raises Cancelled: once a user asked to cancel it."""
        if self.fence.generation != self.generation:
            keeper.hold(self.fence)
            raise keeper.OwnershipLost(self.id)
        if not force and time.monotonic() - self._checked < OWNER_CHECK:
            return
        self._checked = time.monotonic()
        row = db_builds.build_get_by_id(self.id)
        if row is None or tuple((row["engine_id"], row["epoch"])) != tuple(
            self.owner
        ):
            raise keeper.OwnershipLost(self.id)
        self.row = row
        if row["cancel_requested"]:
            raise Cancelled()

    def reload(self):
        row = db_builds.build_get_by_id(self.id)
        if row is None:
            raise keeper.OwnershipLost(self.id)
        self.row = row
        return row

    # Writes --------------------------------------------------------------
    def move(self, status, reason=None, **values):
        """Move the build to ``status`` (a fenced, conditional write).

        :raises OwnershipLost: if it is no longer ours (or in a state
            ``status`` cannot follow: another owner moved it).
        """
        self.flush()
        if not db_builds.build_transition(
            self.id, self.owner, status, reason, **values
        ):
            raise keeper.OwnershipLost(self.id)
        LOG.info(
            "Build %s %s%s", self.id, status, ": %s" % reason if reason else ""
        )
        self.row = dict(self.row, status=status, **values)
        if status == B.DEPLOYED and self.row.get("image_id"):
            # It counts for the app's keep_last from now (retention).
            managed_images.image_deployed(self.row["image_id"])
        if status in B.FINISHED:
            # A final build brings no image back: the stack's records
            # hold what it deployed.
            image_holds.release("build", self.id)
            self.log("build %s: %s" % (status, reason or ""))
            self.flush()

    def record(self, **values):
        """Write ``values`` on the build, its status unchanged."""
        if not db_builds.build_record(self.id, self.owner, **values):
            raise keeper.OwnershipLost(self.id)
        self.row = dict(self.row, **values)

    # The log ------------------------------------------------------------
    def log(self, line):
        """Add a line to the build's log: written in batches of at most
        ``LOG_LINES`` lines, and at most ``LOG_SECONDS`` after it came
        (a quiet command's last lines are readable while it runs)."""
        with self._lock:
            self._lines.append(str(line).rstrip("\n") + "\n")
            due = (
                len(self._lines) >= LOG_LINES
                or time.monotonic() - self._flushed >= LOG_SECONDS
            )
            if not due and self._timer is None:
                self._timer = threading.Timer(LOG_SECONDS, self._flush_later)
                self._timer.daemon = True
                self._timer.start()
        if due:
            self.flush()

    def _flush_later(self):
        try:
            self.flush()
        except Exception:  # noqa: BLE001 - the next line flushes again
            LOG.exception("Build %s: could not write its log", self.id)

    def flush(self):
        with self._writing:
            with self._lock:
                lines, self._lines = self._lines, []
                self._flushed = time.monotonic()
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
            if lines:
                db_builds.build_log_append(self.id, "".join(lines))
