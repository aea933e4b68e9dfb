"""``python -m tools.minicloud COMMAND``: start, stop, status, heat-lite,
register-orchestration.

Run from heat_lite's own venv (``pip install -e .[test]``) at the top of
the tree; the cloud's services run from their own cached venv (see
``tools.minicloud.venv``). ``--dir`` (default ``$MINICLOUD_DIR`` or
``~/.cache/heat_lite/minicloud``) holds the configs, logs, data,
``clouds.yaml`` and ``state.json`` of one cloud.
"""

import argparse
import json
import os
import secrets
import sys
import time

from tools.minicloud import catalog, cloud, layout, venv
from tools.minicloud import heat_lite as heat_lite_mod

DEFAULT_DIR = os.environ.get(
    "MINICLOUD_DIR", os.path.join(venv.DEFAULT_CACHE, "minicloud")
)


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tools.minicloud", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--dir",
        default=DEFAULT_DIR,
        help="the cloud's directory (default %(default)s)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="install if needed, then start")
    start.add_argument(
        "--base-port",
        type=int,
        default=layout.DEFAULT_BASE_PORT,
        help="keystone's port; glance, placement, neutron "
        "and nova take the next four; 0 picks free ports "
        "(default %(default)s)",
    )
    start.add_argument(
        "--orchestration-url",
        default="",
        help="heat_lite's API root to list in the catalog "
        "as the orchestration service, e.g. "
        "http://127.0.0.1:8004",
    )
    start.add_argument(
        "--mysql-url",
        default=os.environ.get(
            "HEAT_LITE_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306"
        ),
    )
    start.add_argument(
        "--rabbit",
        default=os.environ.get(
            "HEAT_LITE_TEST_RABBIT", "guest:guest@127.0.0.1:5672"
        ),
    )
    start.add_argument(
        "--password",
        default=None,
        help="password of every user (default: random)",
    )
    sub.add_parser("stop", help="stop it and drop its databases and vhost")
    sub.add_parser("status", help="its processes, URLs and credentials")
    reg = sub.add_parser(
        "register-orchestration", help="(re)point the orchestration endpoint"
    )
    reg.add_argument("url")
    heat = sub.add_parser(
        "heat-lite",
        help="start or stop a heat_lite in keystone mode for this cloud, "
        "listed in its catalog as the orchestration service",
    )
    heat.add_argument("action", choices=("start", "stop"))
    return parser


def heat_lite(lay, action):
    """Start (and list in the catalog) or stop the cloud's heat_lite.

    Its config, logs and state live in ``<dir>/heat_lite``; the endpoint
    it replaced in the catalog is put back when it stops.
    """
    where = os.path.join(lay.dir, "heat_lite")
    if action == "stop":
        try:
            heat = heat_lite_mod.Heat.load(where)
        except FileNotFoundError:
            return None
        before = heat.state.get("replaced_orchestration", "")
        heat.stop()
        if before:
            catalog.register_orchestration(lay, before)
        else:
            catalog.unregister_orchestration(lay)
        return None
    if os.path.exists(os.path.join(where, "heat.json")):
        sys.exit("a heat_lite is already recorded in %s: stop it" % where)
    before = lay.orchestration_url
    heat = heat_lite_mod.Heat(where).start(lay)
    heat.state["replaced_orchestration"] = before
    heat.save()
    catalog.register_orchestration(lay, heat.url)
    return heat


def start(args):
    directory = os.path.abspath(args.dir)
    try:
        old = layout.Layout.load(directory)
    except FileNotFoundError:
        old = None
    if old is not None and old.pids:
        sys.exit(
            "a cloud is already recorded in %s: stop it first" % directory
        )
    os.makedirs(directory, exist_ok=True)
    began = time.monotonic()
    venv_path, install = venv.ensure()
    lay = layout.Layout(
        dir=directory,
        venv=venv_path,
        ports=layout.pick_ports(args.base_port),
        mysql_url=args.mysql_url,
        rabbit=args.rabbit,
        password=args.password or secrets.token_hex(8),
        orchestration_url=args.orchestration_url,
    )
    lay.timings["install"] = round(install, 1)
    cloud.Cloud(lay).start()
    lay.timings["total"] = round(time.monotonic() - began, 1)
    lay.save()
    print(
        "test cloud ready in %.0f s: %s" % (lay.timings["total"], lay.auth_url)
    )
    print(
        "export OS_CLIENT_CONFIG_FILE=%s  # clouds minicloud-admin, "
        "minicloud-demo" % lay.clouds_yaml
    )


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "start":
        return start(args)
    try:
        lay = layout.Layout.load(os.path.abspath(args.dir))
    except FileNotFoundError:
        sys.exit("no test cloud recorded in %s" % args.dir)
    if args.command == "heat-lite":
        heat = heat_lite(lay, args.action)
        if heat is not None:
            print(
                "heat_lite (keystone mode) at %s is the cloud's "
                "orchestration service; logs in %s" % (heat.url, heat.dir)
            )
    elif args.command == "stop":
        heat_lite(lay, "stop")
        cloud.Cloud(lay).stop()
        print("stopped")
    elif args.command == "status":
        report = cloud.Cloud(lay).status()
        report.update(
            auth_url=lay.auth_url,
            clouds_yaml=lay.clouds_yaml,
            ports=lay.ports,
            prefix=lay.prefix,
            timings=lay.timings,
        )
        print(json.dumps(report, indent=2))
    else:
        catalog.register_orchestration(lay, args.url)
        print("orchestration endpoint: %s/v1/%%(tenant_id)s" % args.url)


if __name__ == "__main__":
    main()
