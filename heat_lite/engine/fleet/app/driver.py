"""What a build does, from the push to the image (doc/specs/apps.md):
fetch exactly the pushed commit (``apps.source``), run the app's builder
(``builders``) with its log streamed into the build's log, and upload the
result to the image store (``[apps] image_store``, a plugin of the
``heat_lite.image_stores`` namespace loaded by name: the engine never
imports a cloud plugin) until it is active; then hand it to ``deploy``.

Resumable: a build taken over in BUILDING or UPLOADING starts these steps
again, deleting the image the dead engine had begun (its id is recorded
before any data is sent); one in DEPLOYING or VERIFYING resumes following
its stack's operation. Before deploying, a newer push of the branch
makes the build SUPERSEDED (its image deleted), at most ``[apps]
max_gate_supersessions`` times in a row per branch: a branch pushed to
faster than it builds still deploys. A cancel is honoured between steps
and while waiting.
"""

import logging
import os
import threading
import time
import types

from stevedore import driver as stevedore_driver

from heat_lite import builders, conf
from heat_lite.apps import scratch, source
from heat_lite.common import exception
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import builds as db_builds
from heat_lite.db import managed_images
from heat_lite.engine.fleet import keeper
from heat_lite.engine.fleet.app import run as run_mod

CONF = conf.CONF
LOG = logging.getLogger(__name__)
STORES = "heat_lite.image_stores"
MiB = 1024 * 1024


def load_store(name):
    """The image store plugin ``name`` (``heat_lite.image_stores``)."""
    return stevedore_driver.DriverManager(
        STORES, name, invoke_on_load=True
    ).driver


def on_behalf(app, services=None):
    """Whom the cloud sees acting for ``app``'s builds: what an image
    store (and the cloud client) reads as a plugin's ``stack`` and
    ``services`` (keystone mode: the app's trust, when it has one)."""
    return types.SimpleNamespace(
        stack={"id": app["id"], "trust": app.get("trust_id")},
        services=services,
    )


class BuildDriver:
    """Runs builds for one engine process.

    :param deployer: the ``deploy.Deployer``.
    :param services: the engine's plugin services (the acting identity).
    :param store: the image store, or None to load ``[apps] image_store``
        on first use.
    :param poll: seconds between two looks at an upload.
    """

    def __init__(self, deployer, services=None, store=None, poll=1.0):
        self.deployer = deployer
        self.services = services
        self._store = store
        self._lock = threading.Lock()
        self.poll = poll

    @property
    def store(self):
        with self._lock:
            if self._store is None:
                self._store = load_store(CONF.apps.image_store)
            return self._store

    def run(self, run):
        """Take the build from where its row says to a final state."""
        try:
            self._steps(run)
        except keeper.OwnershipLost:
            raise
        except run_mod.Cancelled:
            self._stop(run, B.CANCELLED, "Cancelled")
        except run_mod.Superseded:
            self._stop(run, B.SUPERSEDED, "A newer push of the branch")
        except exception.HeatLiteException as exc:
            self._stop(run, B.FAILED, str(exc))
        except Exception as exc:  # noqa: BLE001 - recorded on the build
            LOG.exception("Build %s failed", run.id)
            self._stop(run, B.FAILED, "%s: %s" % (type(exc).__name__, exc))

    def _steps(self, run):
        status = run.row["status"]
        if status in (B.BUILDING, B.UPLOADING):
            self._forget_image(run)
            self._build_and_upload(run)
            status = run.row["status"]
        if status in (B.DEPLOYING, B.VERIFYING):
            self.deployer.deploy(run)

    def _stop(self, run, status, reason):
        """End the build at ``status``; an image it made that no stack
        uses (it did not get to deploying) is deleted."""
        if run.row["status"] in (B.BUILDING, B.UPLOADING):
            self._forget_image(run, keep_going=True)
        elif status == B.CANCELLED:
            self.deployer.cancel(run)
        run.move(status, reason)

    def _forget_image(self, run, keep_going=False):
        image_id = run.row.get("image_id")
        if not image_id:
            return
        try:
            self.store.delete(on_behalf(run.app, self.services), image_id)
            run.log("image %s deleted" % image_id)
        except Exception as exc:  # noqa: BLE001 - logged on the build
            if not keep_going:
                raise
            run.log("could not delete image %s: %s" % (image_id, exc))
            return
        run.record(image_id=None)

    # Fetch and build -------------------------------------------------------
    def _build_and_upload(self, run):
        row, spec = run.row, run.app["spec"]
        builder = builders.get_builder(spec["builder"]["name"], CONF.apps)
        options = builder.validate_options(spec["builder"].get("options"))
        with scratch.build_dir(CONF.apps.scratch_dir, run.id) as work:
            run.log(
                "fetching %s of %s" % (row["commit"], spec["source"]["url"])
            )
            checkout = source.fetch_commit(
                spec["source"]["url"],
                row["commit"],
                os.path.join(work, "src"),
                CONF.apps.allowed_sources,
                CONF.apps.fetch_timeout,
                CONF.apps.max_source_size * MiB,
                run.log,
                ref=row["ref"],
                ssh_command=CONF.apps.git_ssh_command,
            )
            run.check()
            run.log("building with %s" % builder.name)
            out = os.path.join(work, "out")
            os.mkdir(out, 0o700)
            artifact = builder.build(
                checkout.tree, options, out, run.log, check=run.check
            )
            run.check()
            if run.row["status"] == B.BUILDING:
                run.move(B.UPLOADING)
            self._upload(run, artifact)
        run.check(force=True)
        if self._superseded(run.row):
            raise run_mod.Superseded()
        run.move(B.DEPLOYING)

    @staticmethod
    def _superseded(row):
        """A newer push of the branch waits: drop this finished image,
        unless the branch has already dropped ``[apps]
        max_gate_supersessions`` of them since it last deployed (pushes
        faster than builds would otherwise starve it for good)."""
        if not db_builds.build_newer_exists(row):
            return False
        dropped = db_builds.build_gate_superseded_count(row)
        return dropped < CONF.apps.max_gate_supersessions

    def _upload(self, run, artifact):
        row, store = run.row, self.store
        acting = on_behalf(run.app, self.services)
        properties = {
            "heat_lite_app": run.app["id"],
            "heat_lite_build": row["id"],
            "source_ref": row["ref"],
            "source_commit": row["commit"],
        }
        name = "%s-%s" % (run.app["name"], row["commit"][:12])
        image_id = store.create(acting, name, artifact, properties)
        run.record(image_id=image_id)
        # Held by this build until it is final (image retention).
        managed_images.image_add(
            {
                "id": image_id,
                "tenant": row["tenant"],
                "app_id": run.app["id"],
                "branch": row["branch"],
                "build_id": row["id"],
                "name": name,
            }
        )
        run.log("image %s: uploading" % image_id)
        store.upload(acting, image_id, artifact)
        deadline = time.monotonic() + CONF.apps.build_timeout
        while store.status(acting, image_id) != "active":
            run.check()
            if time.monotonic() > deadline:
                raise exception.HeatLiteException(
                    message="image %s not active after %d s"
                    % (image_id, CONF.apps.build_timeout)
                )
            time.sleep(self.poll)
        run.log("image %s: active" % image_id)
