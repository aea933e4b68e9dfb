"""Options of the engine and its workers ([DEFAULT] and [engine])."""

from oslo_config import cfg

GROUP = "engine"

default_opts = [
    cfg.StrOpt(
        "counters_dir",
        help="Directory where every heat_lite process writes its cost "
        "counters (SQL statements and transactions, RPC casts and calls, "
        "peak RSS) as JSON once a second. For benchmarks; unset: off.",
    ),
    cfg.StrOpt(
        "host",
        sample_default="<hostname>",
        help="Name of this host, used as the RPC server name and in the "
        "service list. Defaults to the machine's hostname.",
    ),
    cfg.StrOpt(
        "auth_encryption_key",
        secret=True,
        help="Key (at least 32 characters) that encrypts the token of the "
        "user who starts a stack operation while the engine keeps it in "
        "the database for that operation, so that OS::Heat::Stack can act "
        "in the remote cloud as that user (keystone mode). It must be the "
        "same on every engine process; changing it while operations run "
        "makes their kept tokens unreadable. It also encrypts the id of "
        "each stack's Keystone trust (see [trustee]). Unset: no token is "
        "kept, OS::Heat::Stack uses the [remote_stack] credentials, and "
        "trust ids are kept unencrypted.",
    ),
]

engine_opts = [
    cfg.StrOpt(
        "topic",
        default="heat_lite-engine",
        help="RPC topic of the engine service (stack operations).",
    ),
    cfg.StrOpt(
        "worker_topic",
        default="heat_lite-worker",
        help="RPC topic of the workers (check_resource casts).",
    ),
    cfg.IntOpt(
        "workers",
        default=1,
        min=1,
        max=64,
        help="Number of engine worker processes heat-lite-engine starts.",
    ),
    cfg.IntOpt(
        "executor_threads",
        default=32,
        min=2,
        max=1024,
        help="Threads per engine process handling RPC messages.",
    ),
    cfg.FloatOpt(
        "heartbeat_interval",
        default=2.0,
        min=0.1,
        help="Seconds between two heartbeats of an engine in the service "
        "table (on a thread of their own), and between two passes of the "
        "recovery watchdog.",
    ),
    cfg.FloatOpt(
        "engine_life_check_timeout",
        default=20.0,
        min=0.5,
        help="Seconds without a heartbeat after which an engine is "
        "considered dead: a surviving engine claims it, takes over its "
        "locks and re-drives its in-flight resource checks; the claimed "
        "engine is fenced (its late writes are refused) and registers "
        "again. An engine starts no resource action once its last "
        "successful heartbeat is older than 60% of this. The default "
        "tolerates ten missed heartbeats, so that a loaded machine does "
        "not flap; an engine process restarted on the same host recovers "
        "its own work at once, whatever this is.",
    ),
    cfg.FloatOpt(
        "graceful_shutdown_timeout",
        default=30.0,
        min=0.0,
        max=3600.0,
        help="Seconds a stopping engine (SIGTERM) lets the resource actions "
        "it runs finish before it hands the rest over to the other "
        "engines (their locks released and their checks re-sent). It takes "
        "no new work meanwhile. 0: hand over at once.",
    ),
    cfg.FloatOpt(
        "stall_timeout",
        default=30.0,
        min=1.0,
        help="Seconds a traversal may make no progress before its ready "
        "nodes are re-driven (recovers from lost RPC messages).",
    ),
    cfg.IntOpt(
        "node_redrive_limit",
        default=5,
        min=0,
        max=1000,
        help="Times the watchdog re-drives one stalled node of a traversal "
        "(a lost message, an engine that died before casting it) before it "
        "fails that node visibly, with a reason and an event, and with it "
        "the stack (or starts its rollback). The count is kept in the "
        "database, so it holds across engines. 0: fail a stalled node at "
        "once. A node waiting at a breakpoint hook is re-driven without "
        "limit.",
    ),
    cfg.FloatOpt(
        "node_redrive_backoff_max",
        default=300.0,
        min=1.0,
        help="Upper bound, in seconds, of the wait between two re-drives "
        "of one stalled node. The first re-drive comes after stall_timeout; "
        "the wait then starts at stall_timeout and doubles after each "
        "re-drive, up to this bound.",
    ),
    cfg.IntOpt(
        "stack_action_timeout",
        default=3600,
        min=1,
        help="Seconds a stack action may take when the stack has no "
        "timeout_mins of its own.",
    ),
    cfg.StrOpt(
        "test_resource_ledger",
        help="File to which OS::Heat::TestResource appends every physical "
        "ID it creates and deletes, one line each, so tests can prove that "
        "nothing leaks. Unset: no ledger.",
    ),
    cfg.IntOpt(
        "batch_size",
        default=64,
        min=1,
        max=10000,
        help="Number of ready resource checks sent in one RPC cast when a "
        "traversal fans out.",
    ),
    cfg.IntOpt(
        "max_record_versions",
        default=5,
        min=1,
        max=1000,
        help="Versions of each resource kept in the database, the live one "
        "included: deleted versions (replaced, removed) stay as history "
        "rows, shown by GET .../resources/{name}/versions, until a resource "
        "has more than this many; then the oldest are deleted when the "
        "stack's operation ends. 1 keeps no history.",
    ),
    cfg.IntOpt(
        "max_queued_updates",
        default=5,
        min=1,
        max=100,
        help="Updates that may wait in the queue of a stack whose update "
        "semantics is 'queue' (behind the running operation); one more "
        "is refused with HTTP 409.",
    ),
    cfg.IntOpt(
        "max_traversal_history",
        default=20,
        min=1,
        max=1000,
        help="Finished traversals kept per stack in its traversal history "
        "(GET .../traversals): when an operation ends, the oldest finished "
        "ones beyond this many are deleted. Running and queued ones are "
        "always kept.",
    ),
]


def register_opts(conf):
    conf.register_opts(default_opts)
    conf.register_opts(engine_opts, group=GROUP)


def list_opts():
    return {"DEFAULT": default_opts, GROUP: engine_opts}
