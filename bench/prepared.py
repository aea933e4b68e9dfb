"""A chain step on PostgreSQL with psycopg2 + ``db.direct``'s PREPARE
layer against psycopg 3 and its own prepared statements.

``python -m bench.prepared [--steps N] [--rounds R]`` runs the
statements of a chain step of ``OS::Heat::None`` records (the node's
read, its dependency handed on by the previous finish, kept open for
the finish as ``worker.update_phase`` does; the finish of one
statement) ``N`` times in a fresh database, in a child process per run,
alternating the drivers for ``R`` rounds. Per step it reports the SQL
statements Core sent, the client's CPU (the thread's) and wall time,
the client's CPU of one statement alone (the record read, looped),
and the round trips: ``sendto`` calls ``strace`` saw between two marker
statements around the steps, in a run of its own (strace slows it).
Needs PostgreSQL at ``HEAT_LITE_BENCH_PG`` (default
``postgres@127.0.0.1:5432``, trust) and, for the round trips,
``strace``; psycopg 3 is ``pip install 'psycopg[binary]'``.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa

SERVER = os.environ.get("HEAT_LITE_BENCH_PG", "postgres@127.0.0.1:5432")
DRIVERS = ("psycopg2", "psycopg")
TRAVERSAL = "trav"
# A statement sent before and after the steps, found in strace's output.
MARK = "SELECT 'bench-%s'"


def _database():
    """Create a private database; return (its name, drop callable)."""
    name = "heat_lite_prep_%s" % uuid.uuid4().hex[:10]
    admin = sa.create_engine(
        "postgresql+psycopg2://%s/postgres" % SERVER,
        isolation_level="AUTOCOMMIT",
    )
    with admin.connect() as conn:
        conn.exec_driver_sql("CREATE DATABASE %s" % name)

    def drop():
        with admin.connect() as conn:
            conn.exec_driver_sql("DROP DATABASE %s WITH (FORCE)" % name)
        admin.dispose()

    return name, drop


def _seed(steps):
    """A stack in ``TRAVERSAL`` and a chain of ``steps + 1`` records, the
    first converged, each later one waiting for the one before; return
    the record ids in chain order."""
    from heat_lite.db import models
    from heat_lite.db import sync_points as db_sync_points
    from heat_lite.db.session import transaction

    stack, record = models.Stack.__table__, models.Resource.__table__
    template = models.RawTemplate.__table__
    stack_id = str(uuid.uuid4())
    with transaction() as conn:
        template_id = conn.execute(
            template.insert().values(
                stack_id=stack_id, template="{}", environment="{}", files="{}"
            )
        ).inserted_primary_key[0]
        conn.execute(
            stack.insert().values(
                id=stack_id,
                name="chain",
                tenant="t",
                raw_template_id=template_id,
                action="CREATE",
                status="IN_PROGRESS",
                current_traversal=TRAVERSAL,
            )
        )
        ids = []
        for i in range(steps + 1):
            result = conn.execute(
                record.insert().values(
                    uuid=str(uuid.uuid4()),
                    stack_id=stack_id,
                    name="r%d" % i,
                    type="OS::Heat::None",
                    action="INIT" if i else "CREATE",
                    status="COMPLETE",
                    template_id=template_id,
                    converged_traversal=None if i else TRAVERSAL,
                )
            )
            ids.append(result.inserted_primary_key[0])
        counts = {(rid, "update"): 1 for rid in ids[1:]}
        db_sync_points.insert_sync_points(conn, stack_id, TRAVERSAL, counts)
    return stack_id, ids


def _steps(stack_id, ids):
    """Run the chain: read each record with its handed dependency, finish
    it handing itself on. Returns (statements, thread CPU s, wall s)."""
    from heat_lite.db import direct, statements
    from heat_lite.db import events as db_events
    from heat_lite.db import finish as db_finish
    from heat_lite.db import records as db_records
    from heat_lite.db import session as db_session

    sent = [0]

    def count(*args):
        sent[0] += 1

    engine = db_session.get_engine()
    sa.event.listen(engine, "before_cursor_execute", count)
    with db_session.transaction(writer=False) as conn:
        conn.exec_driver_sql(MARK % "start")
    first = db_records.resource_load(ids[0])
    handed = {ids[0]: {k: first[k] for k in first if k[:6] != "stack_"}}
    cpu, wall = time.thread_time(), time.perf_counter()
    for i, rid in enumerate(ids[1:], 1):
        before = "r%d" % (i - 1)
        with db_records.node_scope():
            record, deps = db_records.node_load(
                rid,
                TRAVERSAL,
                lambda r, before=before: [before],
                keep=lambda r: True,
                handed=handed,
            )
            assert before in deps, (i, deps)
            event = db_events.event_values(
                stack_id, record["name"], "", "CREATE", "COMPLETE", "ok", "N"
            )
            handing = []
            successors = [ids[i + 1]] if i + 1 < len(ids) else []
            db_finish.resource_finish(
                rid,
                record["atomic_key"],
                None,
                {
                    "action": "CREATE",
                    "status": "COMPLETE",
                    "status_reason": "ok",
                    "converged_traversal": TRAVERSAL,
                },
                [event],
                TRAVERSAL,
                "update",
                successors,
                handing=handing,
            )
        handed = {rid: handing[0]} if handing else {}
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    sa.event.remove(engine, "before_cursor_execute", count)
    with db_session.transaction(writer=False) as conn:
        conn.exec_driver_sql(MARK % "end")
    with db_session.transaction(writer=False) as conn:
        # The statements prepared on the (one, reused) connection:
        # PREPARE's and the driver's own alike.
        prepared = conn.exec_driver_sql(
            "SELECT count(*) FROM pg_prepared_statements"
        ).scalar()
        # One statement alone, the record read, on one connection: the
        # client's CPU per statement without the step around it.
        read = statements.record_select()
        one = time.thread_time()
        for rid in ids:
            direct.execute(conn, read, {"_rid": rid}).first()
        one = (time.thread_time() - one) / len(ids)
    return sent[0], cpu, wall, prepared, one


def child(driver, steps):
    """One run in this process: print its JSON line."""
    from heat_lite import conf
    from heat_lite.db import migration

    name, drop = _database()
    try:
        conf.CONF([], project="heat_lite")
        conf.CONF.set_override(
            "connection",
            "postgresql+%s://%s/%s" % (driver, SERVER, name),
            group="database",
        )
        migration.upgrade("head")
        stack_id, ids = _seed(steps)
        sent, cpu, wall, prepared, one = _steps(stack_id, ids)
    finally:
        from heat_lite.db import session as db_session

        db_session.get_engine().dispose()
        drop()
    print(
        json.dumps(
            {
                "driver": driver,
                "steps": steps,
                "statements_per_step": sent / steps,
                "cpu_ms_per_step": 1000 * cpu / steps,
                "wall_ms_per_step": 1000 * wall / steps,
                "prepared_on_server": prepared,
                "cpu_ms_per_read": 1000 * one,
            }
        )
    )


def _run(driver, steps, strace=False):
    cmd = [sys.executable, "-m", "bench.prepared", "--child", driver]
    cmd += ["--steps", str(steps)]
    if not strace:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as trace:
        prefix = ["strace", "-f", "-e", "trace=sendto", "-s", "48", "-o"]
        subprocess.run(
            prefix + [trace.name] + cmd, check=True, capture_output=True
        )
        lines = trace.read().splitlines()
    # The messages sent between the two markers ``_steps`` sends.
    start = next(i for i, line in enumerate(lines) if MARK % "start" in line)
    end = next(i for i, line in enumerate(lines) if MARK % "end" in line)
    return sum("sendto(" in line for line in lines[start + 1 : end]) / steps


def _by_driver(runs, key):
    """{driver: the runs' ``key``, sorted}."""
    return {
        d: sorted(round(r[key], 3) for r in runs if r["driver"] == d)
        for d in DRIVERS
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", choices=DRIVERS, help=argparse.SUPPRESS)
    parser.add_argument("--no-strace", action="store_true")
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.steps)
    load = os.getloadavg()[0]
    runs = []
    for r in range(args.rounds):
        order = DRIVERS if r % 2 == 0 else DRIVERS[::-1]
        for driver in order:
            runs.append(_run(driver, args.steps))
            print(json.dumps(runs[-1]), flush=True)
    trips = {}
    if not args.no_strace:
        trips = {d: _run(d, args.steps, strace=True) for d in DRIVERS}
    print(
        json.dumps(
            {
                "load_before": load,
                "load_after": os.getloadavg()[0],
                "round_trips_per_step": trips,
                "cpu_ms_per_step": _by_driver(runs, "cpu_ms_per_step"),
                "wall_ms_per_step": _by_driver(runs, "wall_ms_per_step"),
                "cpu_ms_per_read": _by_driver(runs, "cpu_ms_per_read"),
            }
        )
    )


if __name__ == "__main__":
    main()
