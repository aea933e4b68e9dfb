"""What every part of the engine endpoint shares: finding the stack or
the resource a request names, inside the caller's project, and marking
typed exceptions as expected (they go back to the caller, not the log).
"""

import functools
import logging

import oslo_messaging as messaging

from heat_lite.common import exception
from heat_lite.db import session as db_session
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import cloud, definitions, rpcapi

LOG = logging.getLogger(__name__)
# Every endpoint object of the [engine] topic serves this version: the
# RPC server finds a method on whichever of them has it.
TARGET = messaging.Target(version=rpcapi.RPC_API_VERSION)


def expected(fn):
    """Typed heat_lite errors travel back to the RPC caller as such; a
    database that cannot be reached becomes DatabaseUnavailable (503)
    here, since a driver's exception would reach the API as a 500.
    Custom constraints checked during the call ask the cloud as the caller
    (``engine.cloud``'s ``acting_as``: its token, in keystone mode)."""

    @functools.wraps(fn)
    def translated(*args, **kwargs):
        try:
            with cloud.side().acting_as(
                None, request=args[1] if len(args) > 1 else None
            ):
                return fn(*args, **kwargs)
        except exception.HeatLiteException:
            raise
        except Exception as exc:
            if db_session.is_unavailable(exc):
                LOG.warning("Database unavailable in %s: %s", fn.__name__, exc)
                raise exception.DatabaseUnavailable() from exc
            raise

    return messaging.expected_exceptions(exception.HeatLiteException)(
        translated
    )


def find_stack(ctxt, stack_identity, live=False):
    """The stack row named by ``stack_identity`` in the caller's project.

    :param live: leave out soft-deleted stacks.
    :raises StackNotFound: if it is not there, belongs to another project
        or its name does not match the identity's.
    """
    if not isinstance(stack_identity, dict) or not isinstance(
        stack_identity.get("stack_id"), str
    ):
        raise exception.StackNotFound(name=str(stack_identity))
    stack = db_stacks.stack_get(
        stack_identity["stack_id"],
        tenant=ctxt.project_id,
        show_deleted=not live,
    )
    name = stack_identity.get("stack_name")
    if name and name != stack["name"]:
        raise exception.StackNotFound(name=name)
    return stack


def bound_template(stack):
    """The BoundTemplate of the stack's current template."""
    return definitions.get(
        stack["raw_template_id"], definitions.stack_info(stack)
    )


def records_by_name(stack):
    """{name: current record} of the stack (the newest wins)."""
    return definitions.current_records(stack)


def find_record(stack, resource_name, physical_too=False):
    """The current record named ``resource_name`` (or, with
    ``physical_too``, whose physical id it is).

    :raises ResourceNotFound: if there is none.
    """
    records = records_by_name(stack)
    record = records.get(resource_name)
    if record is None and physical_too:
        record = next(
            (
                r
                for r in records.values()
                if r["physical_resource_id"] == resource_name
            ),
            None,
        )
    if record is None:
        raise exception.ResourceNotFound(
            resource_name=resource_name, stack_name=stack["name"]
        )
    return dict(record, stack_name=stack["name"])


def required_by(stack):
    """{name: [names of resources depending on it]} in the current
    template ({} if the template cannot be bound any more)."""
    result = {}
    try:
        bound = bound_template(stack)
    except exception.HeatLiteException:
        return result
    for name, defn in bound.resources.items():
        for dep in defn.depends:
            result.setdefault(dep, []).append(name)
    return result
