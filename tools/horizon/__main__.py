"""``python -m tools.horizon --dir D start|stop|status``."""

import argparse
import json
import sys

from tools.horizon import server
from tools.minicloud import layout


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tools.horizon", description=__doc__
    )
    parser.add_argument("--dir", required=True, help="the Horizon's directory")
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="install if needed, then serve")
    where = start.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--cloud", help="directory of a running tools.minicloud cloud"
    )
    where.add_argument("--keystone-url", help="Keystone's v3 URL")
    start.add_argument(
        "--page-size",
        type=int,
        default=20,
        help="rows per page of the tables (default %(default)s)",
    )
    sub.add_parser("stop", help="stop it by its recorded PID")
    sub.add_parser("status", help="its URL, PID and timings")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "start":
        try:
            server.Horizon.load(args.dir)
        except FileNotFoundError:
            pass
        else:
            sys.exit("a Horizon is recorded in %s: stop it first" % args.dir)
        url = args.keystone_url
        users = ""
        if args.cloud:
            lay = layout.Layout.load(args.cloud)
            url = lay.auth_url
            users = " (users admin and demo, password %s)" % lay.password
        horizon = server.Horizon(args.dir).start(url, args.page_size)
        print("Horizon at %s%s" % (horizon.url, users))
        print("timings (s): %s" % json.dumps(horizon.state["timings"]))
    elif args.command == "stop":
        try:
            server.Horizon.load(args.dir).stop()
        except FileNotFoundError:
            print("no Horizon recorded in %s" % args.dir)
    else:
        try:
            horizon = server.Horizon.load(args.dir)
        except FileNotFoundError:
            sys.exit("no Horizon recorded in %s" % args.dir)
        print(json.dumps(dict(horizon.state, url=horizon.url), indent=2))


if __name__ == "__main__":
    main()
