"""The engine: everything behind the RPC API, by role.

``rpcapi``
    The RPC clients: ``EngineAPI`` (what the REST API calls) and
    ``WorkerAPI`` (what engines cast to each other).
``process``
    One engine process, wired up: both RPC servers, the node runner, the
    poll scheduler, the heartbeat and the recovery watchdog.
``endpoint/``
    The ``[engine] topic`` endpoint: every call the API makes (stacks,
    reads, resources, catalog, software configs, preview, abandon,
    export, references), answered in Heat's engine format; ``goals`` is
    the checked goal of a create or update every caller shares.
``traversal/``
    One traversal from start to finish: starting and finishing stack
    operations (``ops``), planning the update and cleanup graphs
    (``planner``), the per-process graph cache, verification between the
    phases, and the nested stacks plugins own.
``worker/``
    The ``[engine] worker_topic`` endpoint and what runs a graph node:
    dispatch and the poll scheduler, the node runner (``runner``) and its
    collaborators (update and cleanup phases, changes, resource actions,
    record locks as leases, successors, failures), adopt, hooks and the
    caller's token.
``recovery/``
    Keeping every stack moving when engines die: the engine's identity
    and heartbeat (``fencing``), the watchdog (dead engines, stale locks,
    stalls, timeouts) and its capped re-drives.
``fleet/``
    Operations over many stacks, as taskflow flows persisted in our
    database and owned like resource locks (``keeper`` takes over a dead
    engine's): ``rollout/`` (``runner``, ``run``, ``target``, ``flows``,
    ``endpoint``) and ``promotion/`` (``plan``, ``preview``, ``driver``,
    ``flows``, ``runner``, ``endpoint``).
``drift/``
    Property-level drift detection: the pure comparison (``compare``),
    one detection of a stack tree run on a worker (``detect``) and the
    calls that start it and show its report (``endpoint``).
``template/``
    The template language (HOT and CFN functions, parameters,
    environments, conditions): pure, no database and no RPC.
``graph``, ``definitions``, ``validation``, ``limits``
    Shared by the roles above: the pure dependency graph, parsed and bound
    templates cached by id, checks on what a user submits, and the size
    of a stack tree.
"""
