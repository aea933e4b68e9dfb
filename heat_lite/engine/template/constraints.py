"""Parameter constraints and the registry of custom constraints.

A parameter's ``constraints`` is a list of one-key maps (``length``,
``range``, ``modulo``, ``allowed_values``, ``allowed_pattern``,
``custom_constraint``), each with an optional ``description`` that
replaces the default failure message, as in Heat.

Custom constraints are looked up in a small registry. Heat's own custom
constraints mostly ask a cloud service (``nova.flavor``, ``glance.image``)
that heat_lite does not talk to; an unknown name therefore accepts every
value instead of rejecting templates written for Heat. The registry ships
the pure ones (addresses, CIDRs, DNS names, dates, time zones), and
``register_custom`` adds more.
"""

import contextlib
import contextvars
import datetime
import ipaddress
import re
import zoneinfo

from heat_lite.common import exception
from heat_lite.engine.template import versions

KEYS = (
    "length",
    "range",
    "modulo",
    "allowed_values",
    "allowed_pattern",
    "custom_constraint",
)
# How Heat names the parameter types in "<X> constraint invalid for <T>".
TYPE_NAMES = {
    "string": "String",
    "number": "Number",
    "comma_delimited_list": "List",
    "json": "Map",
    "boolean": "Boolean",
}


class InvalidSchema(ValueError):
    """A constraint definition that cannot be used (message for users)."""


def _number(value):
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, (int, float)):
        return value
    try:
        return int(value)
    except ValueError:
        return float(value)


class Constraint:
    """One constraint: ``check(value)`` returns None or a failure message."""

    name = None
    types = ()

    def __init__(self, spec, description=None):
        self.spec = spec
        self.description = description
        self.setup(spec)

    def setup(self, spec):
        """Validate and unpack the definition; raise InvalidSchema."""

    def check(self, value):
        """None if ``value`` (of the parameter's type) satisfies this."""
        if self.valid(value):
            return None
        return self.description or self.message(value)

    def valid(self, value):
        raise NotImplementedError

    def message(self, value):
        raise NotImplementedError


class _MinMax(Constraint):
    kind = None
    integral = False

    def setup(self, spec):
        if not isinstance(spec, dict) or set(spec) - {"min", "max"}:
            raise InvalidSchema(
                "The %s constraint must be a map with min "
                "and/or max" % self.kind
            )
        self.min, self.max = spec.get("min"), spec.get("max")
        if self.min is None and self.max is None:
            raise InvalidSchema(
                "A %s constraint must have a min value "
                "and/or a max value specified." % self.kind
            )
        allowed = (int,) if self.integral else (int, float)
        for bound in (self.min, self.max):
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, allowed)
            ):
                raise InvalidSchema(
                    "min/max length must be integral"
                    if self.integral
                    else "min/max must be numeric"
                )

    def in_range(self, number):
        return (self.min is None or number >= self.min) and (
            self.max is None or number <= self.max
        )

    def bounds_message(self, what):
        if self.max is None:
            return "The %s must be at least %s." % (what, self.min)
        if self.min is None:
            return "The %s must be no greater than %s." % (what, self.max)
        return "The %s must be in the range %s to %s." % (
            what,
            self.min,
            self.max,
        )


class Length(_MinMax):
    name, kind, integral = "Length", "length", True
    types = ("string", "comma_delimited_list", "json")

    def valid(self, value):
        return self.in_range(len(value))

    def message(self, value):
        return self.bounds_message("length")


class Range(_MinMax):
    name, kind = "Range", "range"
    types = ("number",)

    def valid(self, value):
        return self.in_range(_number(value))

    def message(self, value):
        return self.bounds_message("value")


class Modulo(Constraint):
    name = "Modulo"
    types = ("number",)

    def setup(self, spec):
        if not isinstance(spec, dict) or set(spec) - {"step", "offset"}:
            raise InvalidSchema(
                "The modulo constraint must be a map with step and offset"
            )
        self.step, self.offset = spec.get("step"), spec.get("offset")
        if self.step is None or self.offset is None:
            raise InvalidSchema(
                "A modulo constraint must have a step value "
                "and an offset value specified."
            )
        for value in (self.step, self.offset):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidSchema("step/offset must be integer")
        if self.step == 0:
            raise InvalidSchema("step cannot be 0.")
        if abs(self.offset) >= abs(self.step):
            raise InvalidSchema(
                "offset must be smaller (by absolute value) than step."
            )
        if self.step * self.offset < 0:
            raise InvalidSchema(
                "step and offset must be both positive or both negative."
            )

    def valid(self, value):
        return _number(value) % self.step == self.offset

    def message(self, value):
        return "The value must be a multiple of %s with an offset of %s." % (
            self.step,
            self.offset,
        )


class AllowedValues(Constraint):
    name = "AllowedValues"
    types = ("string", "number", "comma_delimited_list", "boolean")

    def setup(self, spec):
        if not isinstance(spec, list):
            raise InvalidSchema("AllowedValues must be a list")
        self.allowed = spec

    def valid(self, value):
        items = value if isinstance(value, list) else [value]
        return all(any(_same(item, a) for a in self.allowed) for item in items)

    def message(self, value):
        return "Allowed values: %s" % ", ".join(str(a) for a in self.allowed)


def _same(value, allowed):
    """Compare a typed parameter value with an allowed value as written."""
    if isinstance(value, bool):
        return str(allowed).lower() == str(value).lower()
    if isinstance(value, (int, float)):
        try:
            return _number(allowed) == value
        except (TypeError, ValueError):
            return False
    if isinstance(value, str) and isinstance(allowed, (int, float)):
        return str(allowed) == value
    return allowed == value


class AllowedPattern(Constraint):
    name = "AllowedPattern"
    types = ("string",)

    def setup(self, spec):
        if not isinstance(spec, str):
            raise InvalidSchema("AllowedPattern must be a string")
        try:
            self.regex = re.compile(spec)
        except (re.error, OverflowError, RecursionError) as exc:
            raise InvalidSchema(
                'Invalid allowed_pattern "%s": %s' % (spec, exc)
            ) from None

    def valid(self, value):
        match = self.regex.match(value)
        return match is not None and match.end() == len(value)

    def message(self, value):
        return "Value must match pattern: %s" % self.spec


class CustomConstraint(Constraint):
    name = "CustomConstraint"
    types = tuple(TYPE_NAMES)

    def setup(self, spec):
        if not isinstance(spec, str):
            raise InvalidSchema("custom_constraint must be a string")

    def valid(self, value):
        checker = _CUSTOM.get(self.spec) if _CUSTOM_ON.get() else None
        if checker is None:
            return True
        try:
            return bool(checker(value))
        except (TypeError, ValueError):
            return False

    def message(self, value):
        return '"%s" does not validate %s' % (value, self.spec)


CLASSES = {
    "length": Length,
    "range": Range,
    "modulo": Modulo,
    "allowed_values": AllowedValues,
    "allowed_pattern": AllowedPattern,
    "custom_constraint": CustomConstraint,
}


def parse(spec, param_type, version, path):
    """Return the Constraint objects of a parameter's ``constraints``.

    :raises StackValidationFailed: naming ``path`` for a bad definition.
    """
    if spec is None:
        return []
    if not isinstance(spec, list):
        raise exception.StackValidationFailed(
            path=path,
            msg="Invalid parameter constraints for parameter %s, "
            "expected a list" % path.split(".")[-2],
        )
    allowed = set(KEYS)
    if version < versions.MODULO:
        allowed.discard("modulo")
    result = []
    for index, item in enumerate(spec):
        item_path = "%s[%d]" % (path, index)
        result.extend(_parse_item(item, param_type, allowed, item_path))
    return result


def _parse_item(item, param_type, allowed, path):
    if not isinstance(item, dict):
        raise exception.StackValidationFailed(
            path=path, msg="Invalid parameter constraints, expected a map"
        )
    for key in item:
        if key != "description" and key not in allowed:
            raise exception.StackValidationFailed(
                path=path,
                msg="Invalid key '%s' for parameter constraints" % (key,),
            )
    kinds = [k for k in KEYS if k in item]
    if not kinds:
        raise exception.StackValidationFailed(
            path=path, msg="No constraint expressed"
        )
    description = item.get("description")
    if description is not None and not isinstance(description, str):
        description = str(description)
    result = []
    for kind in kinds:
        cls = CLASSES[kind]
        try:
            constraint = cls(item[kind], description)
        except InvalidSchema as exc:
            raise exception.StackValidationFailed(
                path="%s.%s" % (path, kind), msg=str(exc)
            ) from None
        if param_type not in cls.types:
            raise exception.StackValidationFailed(
                path="%s.%s" % (path, kind),
                msg="%s constraint invalid for "
                "%s" % (cls.name, TYPE_NAMES[param_type]),
            )
        result.append(constraint)
    return result


# Custom constraints ------------------------------------------------------
_DNS_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_DNS_NAME = re.compile(r"^%s(\.%s)*\.?$" % (_DNS_LABEL, _DNS_LABEL))
_MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


def _ip_addr(value):
    ipaddress.ip_address(value)
    return True


def _net_cidr(value):
    return "/" in value and bool(ipaddress.ip_network(value, strict=False))


def _dns_name(value):
    return len(value) <= 255 and bool(_DNS_NAME.match(value))


def _rel_dns_name(value):
    return _dns_name(value) and not value.endswith(".")


def _iso_8601(value):
    datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


def _timezone(value):
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


_CUSTOM = {
    "ip_addr": _ip_addr,
    "net_cidr": _net_cidr,
    "mac_addr": lambda value: bool(_MAC.match(value)),
    "dns_name": _dns_name,
    "rel_dns_name": _rel_dns_name,
    "dns_domain": _dns_name,
    "iso_8601": _iso_8601,
    "timezone": _timezone,
}


def register_custom(name, checker):
    """Add custom constraint ``name``: ``checker(value) -> bool``.

    The checker may also raise TypeError/ValueError to reject a value.
    """
    _CUSTOM[name] = checker


def custom_names():
    return sorted(_CUSTOM)


# Off while a stack whose resources do not exist yet is checked below the
# top (``custom_checks_skipped``).
_CUSTOM_ON = contextvars.ContextVar("heat_lite_custom_checks", default=True)


@contextlib.contextmanager
def custom_checks_skipped():
    """Within it, every custom constraint accepts every value.

    For a preview's nested stacks that do not exist yet: their parameters
    may carry what a parent's ``get_resource`` gives before anything is
    created -- the resource's name -- which no cloud lookup can find.
    Heat previews those stacks without checking values either.
    """
    token = _CUSTOM_ON.set(False)
    try:
        yield
    finally:
        _CUSTOM_ON.reset(token)


def custom_checker(name):
    """The checker registered as ``name``, or None (accepts anything)."""
    checker = _CUSTOM.get(name) if _CUSTOM_ON.get() else None
    if checker is None:
        return None

    def check(value):
        try:
            return bool(checker(value))
        except (TypeError, ValueError):
            return False

    return check
