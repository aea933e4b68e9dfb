"""Command-line options to request documents (pure: no client).

The selector of ``stack query`` / ``stack rollout create`` and the
``verify`` document of a verified create, update or rollout, from
options a user can type; the server checks the result again (a bad one
is its 400, with its message).
"""

import json
import urllib.parse

import yaml
from osc_lib import exceptions


def _pair(text, what):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise exceptions.CommandError(
            "%s must be KEY=VALUE, got %r" % (what, text)
        )
    return key, value


def scalar(text):
    """A value typed on the command line: JSON when it parses as JSON
    (``true``, ``3``, ``"5"``, ``[1, 2]``), else the string itself, so
    that ``healthy=yes`` means the string "yes" (YAML would say true)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def add_selector_options(parser, prefix=""):
    """The clauses of a selector as options, ``--<prefix>name`` etc."""
    group = parser.add_argument_group("selector (shell globs)")
    group.add_argument(
        "--%sname" % prefix,
        dest="sel_name",
        metavar="<glob>",
        help="Stack name pattern, e.g. 'app-*'",
    )
    group.add_argument(
        "--%stag" % prefix,
        dest="sel_tags",
        metavar="<tag>",
        action="append",
        default=[],
        help="A tag the stack has (repeat: all of them)",
    )
    group.add_argument(
        "--%sparameter" % prefix,
        dest="sel_parameters",
        metavar="<name=glob>",
        action="append",
        default=[],
        help="A parameter value pattern, e.g. php_version=5.4.* (repeat)",
    )
    group.add_argument(
        "--%sresource" % prefix,
        dest="sel_resources",
        metavar="<type>[,<property>=<glob>...]",
        action="append",
        default=[],
        help="A resource the stack has, by type pattern and resolved "
        "properties, e.g. 'OS::Nova::Server,image=php-5.4*' (repeat)",
    )
    group.add_argument(
        "--%sstatus" % prefix,
        dest="sel_status",
        metavar="<status>",
        action="append",
        default=[],
        help="An accepted stack status, e.g. UPDATE_COMPLETE (repeat)",
    )
    group.add_argument(
        "--selector-file",
        metavar="<file>",
        help="A selector as a YAML or JSON map (the options above are "
        "added to it)",
    )


def _resource_clause(text):
    kind, *props = text.split(",")
    clause = {"type": kind}
    if props:
        clause["properties"] = dict(
            _pair(p, "a resource property") for p in props
        )
    return clause


def selector(parsed_args):
    """The selector the options describe (``{}`` when none given)."""
    sel = {}
    if parsed_args.selector_file:
        with open(parsed_args.selector_file) as f:
            sel = yaml.safe_load(f) or {}
        if not isinstance(sel, dict):
            raise exceptions.CommandError("the selector file is no map")
    if parsed_args.sel_name:
        sel["stack_name"] = parsed_args.sel_name
    if parsed_args.sel_tags:
        sel["tags"] = sel.get("tags", []) + parsed_args.sel_tags
    if parsed_args.sel_parameters:
        params = dict(sel.get("parameters", {}))
        params.update(
            _pair(p, "--parameter") for p in parsed_args.sel_parameters
        )
        sel["parameters"] = params
    if parsed_args.sel_resources:
        sel["resources"] = sel.get("resources", []) + [
            _resource_clause(r) for r in parsed_args.sel_resources
        ]
    if parsed_args.sel_status:
        sel["status"] = sel.get("status", []) + parsed_args.sel_status
    return sel


def add_verify_options(parser, required=False):
    """``--verify-output K=V``, ``--verify-signal``, ``--verify-timeout``."""
    group = parser.add_argument_group(
        "verification (heat_lite)",
        "Checks run after the update converges and before the replaced "
        "resources are cleaned up; a failure rolls the stack back"
        + (" (at least one check is required)" if required else ""),
    )
    group.add_argument(
        "--verify-output",
        metavar="<output=value>",
        action="append",
        default=[],
        help="Wait until the output equals the value (JSON if it parses "
        "as JSON, else a string; repeat for several outputs)",
    )
    group.add_argument(
        "--verify-signal",
        action="store_true",
        help="Wait for a verdict: 'openstack stack verdict <stack> --pass' "
        "(or --fail)",
    )
    group.add_argument(
        "--verify-timeout",
        metavar="<seconds>",
        type=int,
        help="Seconds the checks may take before they fail (server "
        "default 600)",
    )


def verify(parsed_args):
    """The ``verify`` document, or None when no check was asked for."""
    checks = []
    for text in parsed_args.verify_output:
        key, value = _pair(text, "--verify-output")
        checks.append(
            {"type": "output", "output": key, "equals": scalar(value)}
        )
    if parsed_args.verify_signal:
        checks.append({"type": "signal"})
    if not checks:
        if parsed_args.verify_timeout is not None:
            raise exceptions.CommandError(
                "--verify-timeout needs --verify-output or --verify-signal"
            )
        return None
    spec = {"checks": checks}
    if parsed_args.verify_timeout is not None:
        spec["timeout"] = parsed_args.verify_timeout
    return spec


def add_page_options(parser):
    """``--limit`` / ``--marker``: one page of a list, newest first."""
    parser.add_argument(
        "--limit", metavar="<n>", type=int, help="At most this many"
    )
    parser.add_argument(
        "--marker",
        metavar="<id>",
        help="Start after this one (the last ID of the previous page)",
    )


def page_query(parsed_args):
    """The query string (with its ``?``) of ``add_page_options``'s
    options, or "" when neither is given."""
    query = urllib.parse.urlencode(
        [
            (key, value)
            for key, value in (
                ("limit", parsed_args.limit),
                ("marker", parsed_args.marker),
            )
            if value is not None
        ]
    )
    return "?" + query if query else ""
