"""Constraints on resource property values (Heat's ``constraints=[...]``).

Each constraint checks one value and raises ``ValueError`` with a message
that ``properties`` turns into a StackValidationFailed naming the
property's path.
"""

import re

from heat_lite.engine.template import constraints as template_constraints


class Constraint:
    """Base class; ``description`` replaces the default message."""

    def __init__(self, description=None):
        self.description = description

    def check(self, value):
        message = self._error(value)
        if message:
            raise ValueError(self.description or message)

    def _error(self, value):
        raise NotImplementedError

    def to_dict(self):
        result = self._dict()
        if self.description:
            result["description"] = self.description
        return result


class Range(Constraint):
    def __init__(self, min=None, max=None, description=None):
        super().__init__(description)
        self.min, self.max = min, max

    def _error(self, value):
        if self.min is not None and value < self.min:
            return "%s is out of range (min: %s, max: %s)" % (
                value,
                self.min,
                self.max,
            )
        if self.max is not None and value > self.max:
            return "%s is out of range (min: %s, max: %s)" % (
                value,
                self.min,
                self.max,
            )
        return None

    def _dict(self):
        return {
            "range": {
                k: v
                for k, v in (("min", self.min), ("max", self.max))
                if v is not None
            }
        }


class Length(Range):
    def _error(self, value):
        length = len(value)
        if (self.min is not None and length < self.min) or (
            self.max is not None and length > self.max
        ):
            return "length (%d) is out of range (min: %s, max: %s)" % (
                length,
                self.min,
                self.max,
            )
        return None

    def _dict(self):
        return {"length": super()._dict()["range"]}


class AllowedValues(Constraint):
    def __init__(self, allowed, description=None):
        super().__init__(description)
        self.allowed = list(allowed)

    def _error(self, value):
        if value not in self.allowed:
            return '"%s" is not an allowed value %s' % (value, self.allowed)
        return None

    def _dict(self):
        return {"allowed_values": self.allowed}


class AllowedPattern(Constraint):
    def __init__(self, pattern, description=None):
        super().__init__(description)
        self.pattern = pattern
        self._regex = re.compile(pattern)

    def _error(self, value):
        match = self._regex.match(str(value))
        if match is None or match.end() != len(str(value)):
            return '"%s" does not match pattern "%s"' % (value, self.pattern)
        return None

    def _dict(self):
        return {"allowed_pattern": self.pattern}


class CustomConstraint(Constraint):
    """A named check from the custom constraint registry (shared with
    template parameters); unknown names accept every value, as Heat does
    for constraints of services it cannot reach."""

    def __init__(self, name, description=None):
        super().__init__(description)
        self.name = name

    def _error(self, value):
        checker = template_constraints.custom_checker(self.name)
        if checker is not None and not checker(value):
            return '"%s" does not validate %s' % (value, self.name)
        return None

    def _dict(self):
        return {"custom_constraint": self.name}
