"""heat-lite-manage: database migrations, service listing and the purge
of soft-deleted stacks."""

import datetime
import os
import sys

from oslo_config import cfg

from heat_lite.cmd import common, preflight

CONF = common.CONF


def _db_sync(args):
    from heat_lite.db import migration

    migration.upgrade(args.revision or "head")
    print("Database is at revision %s" % migration.version())


def _db_version(args):
    from heat_lite.db import migration, session

    path = session.sqlite_path()
    if path is not None and not os.path.exists(path):
        # Connecting would create an empty file and report "None".
        raise preflight.StartupError("no database at %s" % path)
    print(migration.version() or "None")


def _db_upgrade(args):
    from heat_lite.db import migration

    migration.upgrade(args.revision)
    print("Database is at revision %s" % migration.version())


def _db_downgrade(args):
    from heat_lite.db import migration

    migration.downgrade(args.revision)
    print("Database is at revision %s" % migration.version())


def _service_list(args):
    from heat_lite.db import api as db_api
    from heat_lite.db import models

    now = models.utcnow()
    rows = [
        (
            "Hostname",
            "Binary",
            "Engine_Id",
            "Host",
            "Topic",
            "Status",
            "Updated At",
        )
    ]
    for svc in db_api.service_get_all():
        age = (now - svc["updated_at"]).total_seconds()
        up = age <= CONF.engine.engine_life_check_timeout
        rows.append(
            (
                svc["hostname"],
                svc["binary"],
                svc["engine_id"],
                svc["host"],
                svc["topic"],
                "up" if up else "down",
                svc["updated_at"].strftime("%Y-%m-%dT%H:%M:%S"),
            )
        )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(
                str(v).ljust(w) for v, w in zip(row, widths, strict=True)
            )
        )


_GRANULARITY = ("days", "hours", "minutes", "seconds")


def _purge_deleted(args):
    """Hard-delete the stacks deleted more than ``age`` units ago."""
    from heat_lite.db import models, purge

    age = args.age_option if args.age_option is not None else args.age
    if age < 0:
        raise ValueError("age should be a positive integer")
    if args.batch_size < 1:
        raise ValueError("batch_size should be a positive integer")
    older_than = models.utcnow() - datetime.timedelta(
        **{args.granularity: age}
    )
    counts = purge.purge_deleted(
        older_than, tenant=args.project_id, batch_size=args.batch_size
    )
    print(
        "Purged %s"
        % ", ".join(
            "%d %s" % (counts[k], k.replace("_", " ")) for k in purge.PURGED
        )
    )


def _add_purge(subparsers):
    # heat-manage's spelling: purge_deleted [-g G] [-p P] [-b B] [age];
    # --age and --batch-size are accepted too.
    purge = subparsers.add_parser(
        "purge_deleted",
        help="hard-delete the stacks soft-deleted more "
        "than AGE (default 90) days ago, with the stacks nested in them "
        "and their records, events, templates, sync points and "
        "traversals, and the engine services deleted before then",
    )
    purge.add_argument(
        "age",
        nargs="?",
        type=int,
        default=90,
        help="how old a deleted stack must be (default 90)",
    )
    purge.add_argument(
        "--age",
        dest="age_option",
        type=int,
        default=None,
        metavar="AGE",
        help="the same as the positional age",
    )
    purge.add_argument(
        "-g",
        "--granularity",
        choices=_GRANULARITY,
        default="days",
        help="unit of AGE (default days)",
    )
    purge.add_argument(
        "-p",
        "--project-id",
        "--project_id",
        dest="project_id",
        default=None,
        help="only the stacks of this project",
    )
    purge.add_argument(
        "-b",
        "--batch_size",
        "--batch-size",
        dest="batch_size",
        type=int,
        default=20,
        help="stacks deleted per transaction (default 20)",
    )
    purge.set_defaults(func=_purge_deleted)


def _add_commands(subparsers):
    db = subparsers.add_parser("db", help="database schema")
    db_sub = db.add_subparsers(dest="db_command")
    db_sub.required = True
    sync = db_sub.add_parser("sync", help="upgrade to the latest schema")
    sync.add_argument("revision", nargs="?", default=None)
    sync.set_defaults(func=_db_sync)
    db_sub.add_parser(
        "version", help="print the schema revision"
    ).set_defaults(func=_db_version)
    up = db_sub.add_parser("upgrade", help="upgrade to REV")
    up.add_argument("revision")
    up.set_defaults(func=_db_upgrade)
    down = db_sub.add_parser(
        "downgrade", help="downgrade to REV (base removes every table)"
    )
    down.add_argument("revision")
    down.set_defaults(func=_db_downgrade)
    service = subparsers.add_parser("service", help="engine services")
    svc_sub = service.add_subparsers(dest="service_command")
    svc_sub.required = True
    svc_sub.add_parser("list", help="list engine services").set_defaults(
        func=_service_list
    )
    _add_purge(subparsers)


@common.reports_startup_errors
def main(argv=None):
    command = cfg.SubCommandOpt(
        "command", title="Commands", handler=_add_commands
    )
    common.parse_args(argv, cli_opts=[command])
    preflight.check_database()
    try:
        CONF.command.func(CONF.command)
    except Exception as exc:  # noqa: BLE001 - a CLI reports, not traces
        print("ERROR: %s" % exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
