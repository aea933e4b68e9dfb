"""The soak: does the database stop growing under a long stream of updates?

K stacks of ``STACK_SIZE`` resources (``OS::Heat::None`` updated in place
and one ``OS::Heat::TestResource`` replaced at every update, so that each
update writes events, a template and a record version) are updated
round-robin by T client threads, U updates in all, in R rounds. At the end
of each round some stacks are deleted and created again (soft-deleted
stacks to purge), then ``heat-lite-manage purge_deleted --age 0`` runs as
an operator's cron job would. The database size is read before and after
each purge: ``pg_database_size`` on PostgreSQL, the tables' data and index
length on MariaDB, the file size on SQLite.

Events (``max_events_per_stack``) and record history
(``[engine] max_record_versions``) are capped when each update finishes;
deleted stacks go with the purge. On PostgreSQL a plain ``VACUUM`` runs
after the purge, as autovacuum would in time, so that the space of the
deleted rows is reused rather than the file extended.
"""

import concurrent.futures
import os
import time

import sqlalchemy as sa

from bench import api, templates

STACK_SIZE = 10
TABLES = (
    "stack",
    "resource",
    "event",
    "raw_template",
    "sync_point",
    "traversal",
)


def stack_template(value):
    """STACK_SIZE - 1 resources updated in place, one replaced."""
    tmpl = templates.none_stack("flat", STACK_SIZE - 1, value)
    tmpl["resources"]["t"] = {
        "type": templates.TEST,
        "properties": {"update_replace_value": str(value)},
    }
    return tmpl


def run_soak(topo, results, stacks, updates, rounds, threads, timeout):
    """Run the soak; one record with the sizes of every round (of the
    rounds done, if it fails)."""
    names = ["soak-%d-%d" % (topo.generation, i) for i in range(stacks)]
    live, sizes = {}, []
    start = time.monotonic()
    try:
        done, costs = topo.measure(
            lambda: _soak(
                topo, names, live, sizes, updates, rounds, threads, timeout
            )
        )
    except (api.OpFailed, api.OpTimeout) as exc:
        status = "timeout" if isinstance(exc, api.OpTimeout) else "failed"
        results.add(
            topo.name,
            "soak",
            "flat",
            stacks,
            status,
            reason=str(exc),
            rounds=sizes,
        )
        raise
    results.add(
        topo.name,
        "soak",
        "flat",
        stacks,
        seconds=time.monotonic() - start,
        costs=costs,
        resources=done * STACK_SIZE,
        updates=done,
        rounds=sizes,
        stack_size=STACK_SIZE,
        threads=threads,
    )


def _soak(topo, names, live, sizes, updates, rounds, threads, timeout):
    client = topo.client
    churn = max(1, len(names) // 10)

    def _create(client, name):
        live[name] = client.create_and_wait(name, stack_template(0), timeout)[
            0
        ]

    _parallel(
        [names[i::threads] for i in range(min(threads, len(names)))],
        _create,
        topo,
    )
    sizes.append(_round_sizes(topo, 0, 0, ""))
    done = 0
    for number in range(1, rounds + 1):
        done += _updates(
            topo,
            threads,
            names,
            live,
            max(1, updates // rounds),
            number,
            timeout,
        )
        for name in names[:churn]:
            client.delete_and_wait(live[name], timeout)
            live[name] = client.create_and_wait(
                name, stack_template(0), timeout
            )[0]
        before = db_size(topo)
        out = topo.deployment.manage(
            "purge_deleted", "--age", "0", "-g", "seconds"
        )
        _vacuum(topo)
        sizes.append(_round_sizes(topo, number, done, out.strip(), before))
        print(
            "[%s] soak round %d: %d updates; bytes before purge %d, "
            "after %d; rows %s"
            % (
                topo.name,
                number,
                done,
                before,
                sizes[-1]["db_bytes_after_purge"],
                sizes[-1]["rows"],
            ),
            flush=True,
        )
    for stack in live.values():
        client.delete_and_wait(stack, timeout)
    return done


def _updates(topo, threads, names, live, count, number, timeout):
    """``count`` updates in all; each thread updates its own stacks
    round-robin (never two updates of one stack at once)."""
    shares = [s for s in (names[i::threads] for i in range(threads)) if s]
    quotas = [
        count // len(shares) + (i < count % len(shares))
        for i in range(len(shares))
    ]

    def _run(client, job):
        mine, quota = job
        for i in range(quota):
            stack = live[mine[i % len(mine)]]
            template = stack_template(number * 100000 + i)
            _retried(
                lambda s=stack, t=template: client.update_and_wait(
                    s, t, timeout
                )
            )

    _parallel([[job] for job in zip(shares, quotas, strict=True)], _run, topo)
    return sum(quotas)


def _retried(fn, attempts=3):
    """Run ``fn``, again if the connection to the API broke (a long run
    on a busy machine sees the odd reset); other failures count."""
    for attempt in range(attempts):
        try:
            return fn()
        except api.OpFailed as exc:
            if "Connection" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(1)


def _parallel(jobs, fn, topo):
    """One thread (with its own client) per list of ``jobs``: each runs
    ``fn(client, item)`` for the items of its list in order."""
    endpoint = topo.deployment.endpoint()

    def _run(mine):
        client = api.StackClient(endpoint, topo.tally, poll_floor=0.1)
        for item in mine:
            fn(client, item)

    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        for future in [pool.submit(_run, j) for j in jobs]:
            future.result()


def _round_sizes(topo, number, done, purged, before=None):
    after = db_size(topo)
    return {
        "round": number,
        "updates_done": done,
        "db_bytes_before_purge": before if before is not None else after,
        "db_bytes_after_purge": after,
        "rows": row_counts(topo),
        "purge_output": purged,
    }


# Measuring the database ----------------------------------------------------
def _db_url(topo):
    with open(topo.deployment.config) as f:
        for line in f:
            if line.startswith("connection = "):
                return line.split(" = ", 1)[1].strip()
    raise RuntimeError("no [database] connection in the config")


def _query(topo, statement, autocommit=False):
    engine = sa.create_engine(_db_url(topo))
    if autocommit:
        engine = engine.execution_options(isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            result = conn.execute(sa.text(statement))
            return result.scalar() if result.returns_rows else None
    finally:
        engine.dispose()


def db_size(topo):
    """Bytes the database takes, as its server counts them."""
    if topo.kind == "postgresql":
        return _query(topo, "SELECT pg_database_size(current_database())")
    if topo.kind == "mysql":
        return int(
            _query(
                topo,
                "SELECT SUM(data_length + index_length) FROM "
                "information_schema.tables WHERE table_schema = DATABASE()",
            )
        )
    path = _db_url(topo).split("sqlite:///", 1)[1]
    return sum(
        os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p)
    )


def row_counts(topo):
    return {
        table: _query(topo, "SELECT count(*) FROM %s" % table)
        for table in TABLES
    }


def _vacuum(topo):
    if topo.kind == "postgresql":
        _query(topo, "VACUUM", autocommit=True)
    elif topo.kind == "mysql":
        # InnoDB's statistics (data_length) are refreshed by ANALYZE.
        _query(topo, "ANALYZE TABLE %s" % ", ".join(TABLES))
