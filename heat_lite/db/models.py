"""SQLAlchemy models: templates, stacks, versioned resource records, events,
sync points and engine services.

A resource name may have several rows in ``resource``: one per *version*.
``role`` says what the version is for (``current``, ``replaced`` or
``pending-delete``); ``engine_id`` + ``atomic_key`` are the optimistic lock
that lets exactly one worker act on a record at a time, and ``lock_epoch``
fences it: a lock is only good while its engine's service row is live with
that ``epoch``. Timestamps use
microsecond precision on every backend so events sort in the order they
happened.
"""

import datetime
import threading

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import declarative_base

BASE = declarative_base()

# MySQL's DATETIME keeps whole seconds unless told otherwise.
DateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
# JSON documents as text: portable, and templates can be large.
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")


class ExactKey(sa.types.TypeDecorator):
    """Text of up to 255 characters that compares byte for byte as a key.

    MySQL's and MariaDB's collations fold case and ignore trailing spaces
    ("web", "Web" and "web " would be one key): there it is a VARBINARY
    of the UTF-8 bytes (at most 4 a character).
    """

    impl = sa.String(255)
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name == "mysql":
            return dialect.type_descriptor(mysql.VARBINARY(1020))
        return dialect.type_descriptor(sa.String(255))

    def process_bind_param(self, value, dialect):
        if value is not None and dialect.name == "mysql":
            return value.encode("utf-8")
        return value

    def process_result_value(self, value, dialect):
        if isinstance(value, bytes):
            return value.decode("utf-8")
        return value


def utcnow():
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class RawTemplate(BASE):
    """An immutable template + environment + files, as submitted."""

    __tablename__ = "raw_template"

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id = sa.Column(sa.String(36), nullable=True, index=True)
    template = sa.Column(LongText, nullable=False)
    environment = sa.Column(LongText, nullable=False)
    files = sa.Column(LongText, nullable=False)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)


class Stack(BASE):
    """A stack; ``current_traversal`` is the CAS guard of every operation."""

    __tablename__ = "stack"
    __table_args__ = (
        sa.UniqueConstraint(
            "tenant", "live_name", name="uniq_stack0tenant0live_name"
        ),
        sa.Index("ix_stack_tenant_name", "tenant", "name"),
        sa.Index("ix_stack_owner", "owner_id"),
        sa.Index("ix_stack_status", "status"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    name = sa.Column(sa.String(255), nullable=False)
    tenant = sa.Column(sa.String(64), nullable=False)
    # The name while the stack is live, NULL once deleted: the unique key
    # (tenant, live_name) makes a duplicate name impossible even when two
    # creates race.
    live_name = sa.Column(sa.String(255), nullable=True)
    username = sa.Column(sa.String(255), nullable=True)
    owner_id = sa.Column(sa.String(36), nullable=True)
    parent_resource_name = sa.Column(sa.String(255), nullable=True)
    nested_depth = sa.Column(sa.Integer, nullable=False, default=0)
    raw_template_id = sa.Column(
        sa.Integer, sa.ForeignKey("raw_template.id"), nullable=False
    )
    # The last template the stack reached COMPLETE on: the rollback target.
    prev_raw_template_id = sa.Column(
        sa.Integer, sa.ForeignKey("raw_template.id"), nullable=True
    )
    action = sa.Column(sa.String(16), nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    current_traversal = sa.Column(sa.String(36), nullable=False)
    timeout = sa.Column(sa.Integer, nullable=True)
    disable_rollback = sa.Column(sa.Boolean, nullable=False, default=True)
    tags = sa.Column(sa.Text, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)
    # When the running action started: the clock of timeout_mins.
    action_started_at = sa.Column(DateTime, nullable=False, default=utcnow)
    deleted_at = sa.Column(DateTime, nullable=True)
    # keystone mode: the Keystone trust the stack's resources act through
    # (encrypted under auth_encryption_key when it is set; see
    # engine.trusts). A nested stack holds a copy of its root's; NULL once
    # the stack is deleted.
    trust_id = sa.Column(sa.Text, nullable=True)
    # What an update does while another operation runs: converge (NULL,
    # the default), queue or reject (``states.UPDATE_SEMANTICS``).
    update_semantics = sa.Column(sa.String(16), nullable=True)


class Resource(BASE):
    """One version of a resource; see the module docstring."""

    __tablename__ = "resource"
    __table_args__ = (
        sa.UniqueConstraint(
            "stack_id",
            "name",
            "version",
            name="uniq_resource0stack_id0name0version",
        ),
        sa.Index("ix_resource_engine_id", "engine_id"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    stack_id = sa.Column(
        sa.String(36), sa.ForeignKey("stack.id"), nullable=False
    )
    name = sa.Column(sa.String(255), nullable=False)
    version = sa.Column(sa.Integer, nullable=False, default=1)
    role = sa.Column(sa.String(16), nullable=False, default="current")
    type = sa.Column(sa.String(255), nullable=False)
    physical_resource_id = sa.Column(sa.String(255), nullable=True)
    action = sa.Column(sa.String(16), nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    # The template this version last converged to (or was made for).
    template_id = sa.Column(
        sa.Integer, sa.ForeignKey("raw_template.id"), nullable=False
    )
    # Traversal in which this version last finished its update node.
    converged_traversal = sa.Column(sa.String(36), nullable=True)
    properties_data = sa.Column(LongText, nullable=True)
    # While an in-place update holds the lock, and after one was cut short
    # (the engine died, the lock was taken for an orphan): the properties
    # before it. ``properties_data`` already holds the ones it tried, so
    # the next update node knows the resource may lie anywhere between.
    properties_before = sa.Column(LongText, nullable=True)
    attr_data = sa.Column(LongText, nullable=True)
    rsrc_data = sa.Column(sa.Text, nullable=True)
    rsrc_metadata = sa.Column(sa.Text, nullable=True)
    requires = sa.Column(sa.Text, nullable=True)
    replaces = sa.Column(sa.Integer, nullable=True)
    replaced_by = sa.Column(sa.Integer, nullable=True)
    engine_id = sa.Column(sa.String(36), nullable=True)
    # The epoch of the holder's service row when it took the lock.
    lock_epoch = sa.Column(sa.Integer, nullable=True)
    lock_traversal = sa.Column(sa.String(36), nullable=True)
    # A breakpoint this version waits on: "<hook> <traversal> pending" until
    # a signal turns it into "... cleared".
    hook = sa.Column(sa.String(64), nullable=True)
    atomic_key = sa.Column(sa.Integer, nullable=False, default=0)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)


class ResourceSignal(BASE):
    """One signal a record keeps (a WaitConditionHandle's), by its id.

    A row per (record, signal id), so that storing a signal writes its own
    row only (``db.signals``). ``position`` is the arrival order of the id
    (a known id replaced keeps its place, as in Heat's metadata map).
    """

    __tablename__ = "resource_signal"
    __table_args__ = (
        sa.PrimaryKeyConstraint("resource_id", "signal_id"),
        sa.Index("ix_resource_signal_stack_id", "stack_id"),
    )

    resource_id = sa.Column(sa.Integer, nullable=False)
    signal_id = sa.Column(ExactKey(), nullable=False)
    stack_id = sa.Column(sa.String(36), nullable=False)
    position = sa.Column(sa.Integer, nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    reason = sa.Column(LongText, nullable=True)
    # The signal's ``data`` as JSON.
    data = sa.Column(LongText, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)


class Event(BASE):
    """A state transition of a stack or a resource."""

    __tablename__ = "event"
    __table_args__ = (sa.Index("ix_event_stack_id", "stack_id", "id"),)

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    resource_name = sa.Column(sa.String(255), nullable=True)
    physical_resource_id = sa.Column(sa.String(255), nullable=True)
    resource_action = sa.Column(sa.String(16), nullable=True)
    resource_status = sa.Column(sa.String(16), nullable=True)
    resource_status_reason = sa.Column(sa.Text, nullable=True)
    resource_type = sa.Column(sa.String(255), nullable=True)
    resource_properties = sa.Column(sa.Text, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)


class SyncPoint(BASE):
    """The join of one graph node in one traversal.

    ``remaining`` counts the predecessors that have not reported yet; the
    worker whose decrement brings it to zero fires the node. The stack's own
    sync point (``entity_id`` = 0, phase ``stack``) fires completion.
    """

    __tablename__ = "sync_point"
    __table_args__ = (
        sa.PrimaryKeyConstraint("traversal_id", "entity_id", "phase"),
        sa.Index("ix_sync_point_stack_id", "stack_id"),
    )

    traversal_id = sa.Column(sa.String(36), nullable=False)
    entity_id = sa.Column(sa.Integer, nullable=False)
    phase = sa.Column(sa.String(8), nullable=False)
    stack_id = sa.Column(sa.String(36), nullable=False)
    remaining = sa.Column(sa.Integer, nullable=False)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    # How often the node was re-driven without progress, and when last:
    # the watchdog backs off and finally fails it (``db.redrives``).
    redrives = sa.Column(
        sa.Integer, nullable=False, default=0, server_default="0"
    )
    redriven_at = sa.Column(DateTime, nullable=True)


class Traversal(BASE):
    """The graph of one traversal (nodes and edges as JSON)."""

    __tablename__ = "traversal"

    id = sa.Column(sa.String(36), primary_key=True)
    stack_id = sa.Column(sa.String(36), nullable=False, index=True)
    # {"update": {node: [successors]}, "depends": {node: [names]}}
    graph = sa.Column(LongText, nullable=False)
    # {node: [successors]} of the cleanup phase, written when it starts.
    cleanup_graph = sa.Column(LongText, nullable=True)
    # The token of the user who started the operation, Fernet-encrypted
    # (heat_lite.common.crypt); gone with the row when the traversal is
    # replaced or finished.
    caller_token = sa.Column(sa.Text, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)


class TraversalLog(BASE):
    """A stack's traversal history and queue (``db.traversal_log``).

    One row per traversal (``id`` is its id): QUEUED rows are the updates
    waiting behind the running one (``request`` holds their goal and
    ``caller_token`` the encrypted token of who asked, both cleared when
    it starts); RUNNING is the stack's current one; the finished ones
    are kept, the newest ``max_traversal_history`` per stack. ``seq``
    orders them (the queue runs in ``seq`` order).
    """

    __tablename__ = "traversal_log"
    __table_args__ = (
        sa.Index("ix_traversal_log_stack_state", "stack_id", "state"),
    )

    seq = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    id = sa.Column(sa.String(36), nullable=False, unique=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    action = sa.Column(sa.String(16), nullable=False)
    state = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    # The user who asked for it (None: the engine, e.g. a rollback
    # after a failure).
    requested_by = sa.Column(sa.String(255), nullable=True)
    superseded_by = sa.Column(sa.String(36), nullable=True)
    request = sa.Column(LongText, nullable=True)
    caller_token = sa.Column(sa.Text, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    started_at = sa.Column(DateTime, nullable=True)
    finished_at = sa.Column(DateTime, nullable=True)


class Service(BASE):
    """An engine process; ``updated_at`` is its heartbeat.

    ``engine_id`` is stable across restarts of one host's process (see
    ``engine.recovery.fencing``); ``epoch`` grows each time it registers,
    so locks taken by an earlier life (or by a zombie that was claimed)
    are recognised and refused.
    """

    __tablename__ = "service"

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    engine_id = sa.Column(sa.String(36), nullable=False, unique=True)
    host = sa.Column(sa.String(255), nullable=False)
    hostname = sa.Column(sa.String(255), nullable=False)
    binary = sa.Column(sa.String(255), nullable=False)
    topic = sa.Column(sa.String(255), nullable=False)
    pid = sa.Column(sa.Integer, nullable=False)
    report_interval = sa.Column(sa.Float, nullable=False)
    epoch = sa.Column(
        sa.Integer, nullable=False, default=1, server_default="1"
    )
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=False, default=utcnow)
    deleted_at = sa.Column(DateTime, nullable=True)


class SoftwareConfig(BASE):
    """A software config (``/software_configs``): immutable once stored.

    ``config`` holds the JSON document ``{config, options, inputs,
    outputs}``, as Heat keeps it.
    """

    __tablename__ = "software_config"
    __table_args__ = (
        sa.Index("ix_software_config_tenant", "tenant", "created_at", "id"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    name = sa.Column(sa.String(255), nullable=True)
    group = sa.Column(sa.String(255), nullable=True)
    config = sa.Column(LongText, nullable=True)
    tenant = sa.Column(sa.String(64), nullable=False)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)


class SoftwareDeployment(BASE):
    """A software deployment (``/software_deployments``): a config
    applied to one server, and what the server reported back.

    ``input_values`` and ``output_values`` are JSON documents. A row is
    visible to its ``tenant`` and to its ``stack_user_project_id`` (the
    project the server's agent authenticates in), as in Heat; deleting
    it deletes the row (nothing to purge).
    """

    __tablename__ = "software_deployment"
    __table_args__ = (
        sa.Index("ix_software_deployment_tenant", "tenant", "created_at"),
        sa.Index("ix_software_deployment_server", "server_id", "created_at"),
        sa.Index("ix_software_deployment_config", "config_id"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    config_id = sa.Column(sa.String(36), nullable=False)
    server_id = sa.Column(sa.String(255), nullable=False)
    input_values = sa.Column(LongText, nullable=True)
    output_values = sa.Column(LongText, nullable=True)
    action = sa.Column(sa.String(255), nullable=True)
    status = sa.Column(sa.String(255), nullable=True)
    status_reason = sa.Column(sa.Text, nullable=True)
    tenant = sa.Column(sa.String(64), nullable=False)
    stack_user_project_id = sa.Column(sa.String(64), nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)


class Snapshot(BASE):
    """A stack snapshot (``/stacks/<s>/<id>/snapshots``).

    ``traversal`` is the SNAPSHOT traversal that fills it; ``data`` is
    the stack's abandon data (template, environment, each resource's
    ``resource_data``) once it is COMPLETE, as Heat keeps it.
    """

    __tablename__ = "snapshot"
    __table_args__ = (sa.Index("ix_snapshot_stack", "stack_id", "created_at"),)

    id = sa.Column(sa.String(36), primary_key=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    tenant = sa.Column(sa.String(64), nullable=False)
    name = sa.Column(sa.String(255), nullable=True)
    traversal = sa.Column(sa.String(36), nullable=True)
    status = sa.Column(sa.String(255), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    data = sa.Column(LongText, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)


class Verification(BASE):
    """The checks of a verified update or create (``engine.traversal.verify``).

    One row per traversal that carries ``verify``; it outlives the
    traversal row (which is purged when the stack finishes) so that a
    caller that started the operation (a rollout) can learn its outcome.
    ``started_at`` is set when the update phase converged (the checks'
    clock), ``verdict`` holds a signalled ``{"status", "reason"}`` and
    ``result`` (PASS / FAIL) is decided exactly once, by a conditional
    write.
    """

    __tablename__ = "verification"

    traversal_id = sa.Column(sa.String(36), primary_key=True)
    stack_id = sa.Column(sa.String(36), nullable=False, index=True)
    # {"timeout": seconds, "checks": [{"type": ...}, ...]}
    spec = sa.Column(sa.Text, nullable=False)
    started_at = sa.Column(DateTime, nullable=True)
    verdict = sa.Column(sa.Text, nullable=True)
    result = sa.Column(sa.String(16), nullable=True)
    reason = sa.Column(sa.Text, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    finished_at = sa.Column(DateTime, nullable=True)


class Rollout(BASE):
    """A rollout: one update (and its checks) applied to many stacks in
    batches (``engine.fleet``).

    ``spec`` is the checked request (selector, update, verify,
    strategy). ``engine_id`` + ``epoch`` name the engine life that runs
    it; every write of the runner is conditional on them, so an engine
    claimed as dead can no longer move it, and another engine takes it
    over when that life is no longer a live service row.
    """

    __tablename__ = "rollout"
    __table_args__ = (
        sa.Index("ix_rollout_tenant", "tenant", "created_at", "id"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    tenant = sa.Column(sa.String(64), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    spec = sa.Column(LongText, nullable=False)
    # The creator's token (``engine.caller``), for the targets' updates.
    caller_token = sa.Column(sa.Text, nullable=True)
    cancel_requested = sa.Column(sa.Boolean, nullable=False, default=False)
    rollback_requested = sa.Column(sa.Boolean, nullable=False, default=False)
    engine_id = sa.Column(sa.String(36), nullable=True)
    epoch = sa.Column(sa.Integer, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)
    finished_at = sa.Column(DateTime, nullable=True)


class RolloutTarget(BASE):
    """One stack of a rollout, in the rollout's stable order.

    ``traversal_id`` is the verified update the rollout started on the
    stack (recorded before it starts, so a resumed flow recognises its
    own update and never starts a second one); ``revert_traversal_id``
    the update back to ``previous`` (the template, environment and files
    the stack had) when the whole rollout is rolled back.
    """

    __tablename__ = "rollout_target"

    rollout_id = sa.Column(sa.String(36), primary_key=True)
    position = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    stack_id = sa.Column(sa.String(36), nullable=False)
    stack_name = sa.Column(sa.String(255), nullable=False)
    batch = sa.Column(sa.Integer, nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    traversal_id = sa.Column(sa.String(36), nullable=True)
    revert_traversal_id = sa.Column(sa.String(36), nullable=True)
    revert_marked_at = sa.Column(DateTime, nullable=True)
    previous = sa.Column(LongText, nullable=True)
    started_at = sa.Column(DateTime, nullable=True)
    finished_at = sa.Column(DateTime, nullable=True)


class Promotion(BASE):
    """A promotion: a source stack's last COMPLETE template, files and
    environment (``spec["snapshot"]``, with the overlay and the gate)
    applied to a target stack, created or updated (``engine.fleet``).

    ``previous`` is what the target had before (None when the promotion
    created it): what a failed gate or a rollback puts back.
    ``traversal_id`` / ``revert_traversal_id`` are the operations the
    promotion started on the target, recorded (with ``marked_at``)
    before they start so a resumed flow never starts one twice. Owned
    like a rollout: ``engine_id`` + ``epoch``.
    """

    __tablename__ = "promotion"
    __table_args__ = (
        sa.Index("ix_promotion_tenant", "tenant", "created_at"),
        sa.Index("ix_promotion_target_tenant", "target_tenant", "created_at"),
        sa.Index("ix_promotion_target_stack", "target_stack_id", "created_at"),
        sa.Index("ix_promotion_status", "status"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    tenant = sa.Column(sa.String(64), nullable=False)
    target_tenant = sa.Column(sa.String(64), nullable=False)
    username = sa.Column(sa.String(255), nullable=True)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    source_stack_id = sa.Column(sa.String(36), nullable=False)
    source_stack_name = sa.Column(sa.String(255), nullable=False)
    source_template_id = sa.Column(sa.Integer, nullable=False)
    source_template_sha256 = sa.Column(sa.String(64), nullable=False)
    target_stack_id = sa.Column(sa.String(36), nullable=False)
    target_stack_name = sa.Column(sa.String(255), nullable=False)
    created_target = sa.Column(sa.Boolean, nullable=False, default=False)
    spec = sa.Column(LongText, nullable=False)
    previous = sa.Column(LongText, nullable=True)
    caller_token = sa.Column(sa.Text, nullable=True)
    traversal_id = sa.Column(sa.String(36), nullable=True)
    marked_at = sa.Column(DateTime, nullable=True)
    revert_traversal_id = sa.Column(sa.String(36), nullable=True)
    revert_marked_at = sa.Column(DateTime, nullable=True)
    rollback_requested = sa.Column(sa.Boolean, nullable=False, default=False)
    engine_id = sa.Column(sa.String(36), nullable=True)
    epoch = sa.Column(sa.Integer, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)
    finished_at = sa.Column(DateTime, nullable=True)


class App(BASE):
    """An app (doc/specs/apps.md): a git source and the branches it
    follows, a builder, a template with its image parameter, and the
    stacks of its branches. ``spec`` is ``common.app_spec``'s normalised
    form without the secret; ``webhook_secret`` is encrypted
    (``common.crypt``). ``live_name`` is the name while the app is live,
    NULL once deleted: the unique key (tenant, live_name) makes two live
    apps of one name impossible, whatever the timing. ``version`` counts
    updates: an update is conditional on the version it read.
    ``trust_id`` is the Keystone trust its builds act through (keystone
    mode; stored as ``stack.trust_id`` is, see ``engine.trusts``).
    """

    __tablename__ = "app"
    __table_args__ = (
        sa.UniqueConstraint(
            "tenant", "live_name", name="uniq_app0tenant0live_name"
        ),
        sa.Index("ix_app_tenant_created", "tenant", "created_at"),
        sa.Index("ix_app_deleted_at", "deleted_at"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    tenant = sa.Column(sa.String(64), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    live_name = sa.Column(ExactKey(), nullable=True)
    username = sa.Column(sa.String(255), nullable=True)
    spec = sa.Column(LongText, nullable=False)
    webhook_secret = sa.Column(sa.Text, nullable=True)
    version = sa.Column(sa.Integer, nullable=False, default=1)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)
    deleted_at = sa.Column(DateTime, nullable=True)
    trust_id = sa.Column(sa.Text, nullable=True)


class ManagedImage(BASE):
    """An image heat_lite built, under retention
    (doc/specs/image_retention.md; states ``common.states.IMAGE``).

    ``generation`` is bumped by every use (``db.image_holds``): the
    retirement pass moves an image only if the generation it read is
    still the row's, so a use committed meanwhile keeps the image.
    """

    __tablename__ = "managed_image"
    __table_args__ = (
        sa.Index("ix_managed_image_app", "app_id", "branch", "deployed_at"),
        sa.Index("ix_managed_image_tenant", "tenant", "state"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    tenant = sa.Column(sa.String(64), nullable=False)
    app_id = sa.Column(sa.String(36), nullable=True)
    branch = sa.Column(sa.String(255), nullable=True)
    build_id = sa.Column(sa.String(36), nullable=True)
    name = sa.Column(sa.String(255), nullable=True)
    state = sa.Column(sa.String(16), nullable=False)
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    # When its build reached DEPLOYED: the order of ``keep_last``.
    deployed_at = sa.Column(DateTime, nullable=True)
    unneeded_at = sa.Column(DateTime, nullable=True)
    hidden_at = sa.Column(DateTime, nullable=True)
    delete_after = sa.Column(DateTime, nullable=True)
    deleted_at = sa.Column(DateTime, nullable=True)
    # Glance's last refusal (in use, protected): the next pass retries.
    last_error = sa.Column(sa.Text, nullable=True)


class RetentionDefault(BASE):
    """A project's default image retention (``db.retention_defaults``):
    the keys it set (NULL: not set), for its apps that leave them out of
    their own ``retention``; what neither sets follows the
    ``[retention]`` options."""

    __tablename__ = "retention_default"

    tenant = sa.Column(sa.String(64), primary_key=True)
    keep_last = sa.Column(sa.Integer, nullable=True)
    grace = sa.Column(sa.Integer, nullable=True)
    mode = sa.Column(sa.String(16), nullable=True)
    updated_at = sa.Column(DateTime, nullable=False, default=utcnow)


class RecordImage(BASE):
    """An image a resource record's properties name (any role and
    version). Counts only while the record row exists: deleting a record
    (history trim, purge) needs no step of its own here."""

    __tablename__ = "record_image"
    __table_args__ = (
        sa.PrimaryKeyConstraint("image_id", "resource_id"),
        sa.Index("ix_record_image_resource", "resource_id"),
    )

    image_id = sa.Column(sa.String(36), nullable=False)
    resource_id = sa.Column(sa.Integer, nullable=False)


class ImageReference(BASE):
    """An image another holder names: a snapshot, a rollout or promotion
    that can still roll back, a build in flight, an app's template.
    The holder removes its rows when it no longer can use the image."""

    __tablename__ = "image_reference"
    __table_args__ = (
        sa.PrimaryKeyConstraint("image_id", "kind", "holder"),
        sa.Index("ix_image_reference_holder", "kind", "holder"),
    )

    image_id = sa.Column(sa.String(36), nullable=False)
    kind = sa.Column(sa.String(16), nullable=False)
    holder = sa.Column(sa.String(64), nullable=False)
    tenant = sa.Column(sa.String(64), nullable=False)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)


class ImageEvent(BASE):
    """One thing retention did to a managed image: ``action`` hidden,
    deleted, revived (shown again for a use) or delete_failed (Glance
    refused; retried). The events of an app's images are the app's
    image events (``db.image_events.image_events``)."""

    __tablename__ = "image_event"
    __table_args__ = (
        sa.Index("ix_image_event_image", "image_id", "id"),
        sa.Index("ix_image_event_app", "tenant", "app_id", "id"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    image_id = sa.Column(sa.String(36), nullable=False)
    tenant = sa.Column(sa.String(64), nullable=False)
    app_id = sa.Column(sa.String(36), nullable=True)
    action = sa.Column(sa.String(16), nullable=False)
    reason = sa.Column(sa.Text, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)


class AppBuild(BASE):
    """One build of an app (doc/specs/apps.md): a push of a branch made
    into an image and deployed to the branch's stack.

    ``delivery_id`` is the git server's delivery id of a webhook (NULL
    for an authenticated push): (app_id, delivery_id) is unique, so a
    replayed delivery is refused by the database. ``engine_id`` +
    ``epoch`` name the engine life running the build (a fenced claim, as
    a rollout's). ``lane`` is the branch while the build runs (NULL when
    queued or final) and ``slot`` its place among the app's running
    builds: the unique keys (app_id, lane) and (app_id, slot) let at most
    one build of a branch, and at most ``max_builds_per_app`` builds of an
    app, run at once whatever the timing (NULLs never collide).
    """

    __tablename__ = "app_build"
    __table_args__ = (
        sa.UniqueConstraint(
            "app_id", "delivery_id", name="uniq_app_build0app_id0delivery_id"
        ),
        sa.UniqueConstraint(
            "app_id", "lane", name="uniq_app_build0app_id0lane"
        ),
        sa.UniqueConstraint(
            "app_id", "slot", name="uniq_app_build0app_id0slot"
        ),
        sa.Index("ix_app_build_app_created", "app_id", "created_at"),
        sa.Index("ix_app_build_app_branch", "app_id", "branch", "status"),
        sa.Index("ix_app_build_status", "status"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    app_id = sa.Column(sa.String(36), nullable=False)
    tenant = sa.Column(sa.String(64), nullable=False)
    branch = sa.Column(ExactKey(), nullable=False)
    ref = sa.Column(sa.String(255), nullable=False)
    commit = sa.Column(sa.String(64), nullable=False)
    # "push" (an authenticated POST .../pushes) or "webhook"
    source = sa.Column(sa.String(16), nullable=False)
    delivery_id = sa.Column(sa.String(255), nullable=True)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    builder = sa.Column(sa.String(64), nullable=True)
    cancel_requested = sa.Column(sa.Boolean, nullable=False, default=False)
    engine_id = sa.Column(sa.String(36), nullable=True)
    epoch = sa.Column(sa.Integer, nullable=True)
    lane = sa.Column(ExactKey(), nullable=True)
    slot = sa.Column(sa.Integer, nullable=True)
    image_id = sa.Column(sa.String(64), nullable=True)
    # the raw template deployed (the app's with the image parameter set)
    template_id = sa.Column(sa.Integer, nullable=True)
    stack_id = sa.Column(sa.String(36), nullable=True)
    traversal = sa.Column(sa.String(36), nullable=True)
    # the verified update's outcome, JSON {"status", "reason"}
    verification = sa.Column(sa.Text, nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    updated_at = sa.Column(DateTime, nullable=True)
    started_at = sa.Column(DateTime, nullable=True)
    finished_at = sa.Column(DateTime, nullable=True)


class AppBuildLog(BASE):
    """A chunk of a build's log: ``position`` is the offset (in
    characters) of its first character in the whole log, so a reader
    asks for the log from an offset and gets whole chunks back."""

    __tablename__ = "app_build_log"

    build_id = sa.Column(sa.String(36), primary_key=True)
    seq = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    position = sa.Column(sa.BigInteger, nullable=False)
    text = sa.Column(sa.Text, nullable=False)


_TASKFLOW_LOCK = threading.Lock()
_TASKFLOW_TABLES = []


def taskflow_tables():
    """taskflow's persistence tables (logbook, flowdetail, atomdetail).

    Defined by its SQLAlchemy backend, added to ``BASE.metadata`` on first
    use: the rollouts' flows are persisted in our database, in tables our
    migration 0008 creates (taskflow's own alembic history would share our
    ``alembic_version`` table). Importing taskflow costs about 0.3 s of
    CPU, which a process that never runs a rollout does not pay.
    """
    with _TASKFLOW_LOCK:
        if not _TASKFLOW_TABLES:
            from taskflow.persistence.backends.sqlalchemy import tables

            _TASKFLOW_TABLES.extend(tables.fetch(BASE.metadata))
        return tuple(_TASKFLOW_TABLES)


def full_metadata():
    """``BASE.metadata`` with taskflow's tables (what migrations make)."""
    taskflow_tables()
    return BASE.metadata


class StackDrift(BASE):
    """The last drift detection of a top-level stack (issue 32): one row
    per stack, rewritten by each detection (``db.drift``).

    ``detection`` names the run that owns the row: a run stores its
    report only while the row is still its own, so a detection started
    after it (or a stale one taken over) wins. ``report`` is the JSON list
    of per-resource results, nested stacks' included.
    """

    __tablename__ = "stack_drift"

    stack_id = sa.Column(sa.String(36), primary_key=True)
    tenant = sa.Column(sa.String(64), nullable=False)
    detection = sa.Column(sa.String(36), nullable=False)
    status = sa.Column(sa.String(32), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    report = sa.Column(LongText, nullable=True)
    started_at = sa.Column(DateTime, nullable=False, default=utcnow)
    detected_at = sa.Column(DateTime, nullable=True)


class StackPlan(BASE):
    """A saved plan of a stack's update (issue 32 item 3, ``db.plans``).

    ``request`` is the update's inputs as the API got them, ``changes``
    the preview computed from them, ``basis`` what that preview was
    computed against (the traversal of every stack of the tree, the
    version and ``atomic_key`` of each of their live records, a digest of
    the last drift report): applying the plan compares it, in the
    transaction that starts the update, and refuses a changed one.
    ``status``: READY, APPLIED or STALE (EXPIRED is READY past
    ``expires_at``, told at read).
    """

    __tablename__ = "stack_plan"
    __table_args__ = (
        sa.Index(
            "ix_stack_plan_stack_id_created_at", "stack_id", "created_at"
        ),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    tenant = sa.Column(sa.String(64), nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    existing = sa.Column(sa.Boolean, nullable=False, default=False)
    request = sa.Column(LongText, nullable=False)
    changes = sa.Column(LongText, nullable=False)
    basis = sa.Column(LongText, nullable=False)
    traversal = sa.Column(sa.String(36), nullable=True)
    created_by = sa.Column(sa.String(255), nullable=True)
    applied_traversal = sa.Column(sa.String(36), nullable=True)
    created_at = sa.Column(DateTime, nullable=False, default=utcnow)
    expires_at = sa.Column(DateTime, nullable=False)
    applied_at = sa.Column(DateTime, nullable=True)
