"""Condition functions (equals, not, and, or, contains) and ``if``.

A condition argument is a condition name, a boolean, or a condition
expression. Names are checked against the ``conditions`` section while
parsing. ``if`` is decided while parsing when the template is bound (the
conditions are known then), so a bound template never contains it and
its dependencies follow only the chosen branch; an unbound template keeps
it and asks the scope for condition values.
"""

from heat_lite.common import exception
from heat_lite.engine.template import base, versions

IF_USAGE = (
    'Arguments to "if" must be of the form: [condition_name, '
    "value_if_true, value_if_false]"
)


def check_condition_arg(value, ctx, path):
    """Static check of one condition argument (name, boolean, function)."""
    if isinstance(value, (bool, base.Function)):
        return
    names = ctx.condition_names
    if isinstance(value, str) and (names is None or value in names):
        return
    raise exception.StackValidationFailed(
        path=path, msg='Invalid condition "%s"' % (value,)
    )


def truth(value, scope, path):
    """The boolean a resolved condition argument stands for."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return scope.condition(value)
        except exception.StackValidationFailed as exc:
            if exc.kwargs.get("path"):
                raise
            raise exception.StackValidationFailed(
                path=path, msg=exc.kwargs.get("msg", str(exc))
            ) from None
    raise exception.StackValidationFailed(
        path=path, msg='Invalid condition "%s"' % (value,)
    )


class If(base.Function):
    """A function to return corresponding value based on condition evaluation.

    ``if: [condition, value_if_true, value_if_false]``; from 2021-04-16 the
    last value may be left out, and a false condition then removes the
    enclosing item.
    """

    names = ("if",)

    @classmethod
    def build(cls, ctx, name, raw, path, depth):
        sizes = (2, 3) if ctx.version >= versions.IF_NULLABLE else (3,)
        if not isinstance(raw, list) or len(raw) not in sizes:
            raise exception.StackValidationFailed(path=path, msg=IF_USAGE)
        argpath = base.join_path(path, name)
        cond = ctx.condition_context().parse(
            raw[0], base.join_path(argpath, 0), depth + 1
        )
        check_condition_arg(cond, ctx, path)
        if ctx.conditions is not None:
            chosen = 1 if ctx.evaluate_condition(cond, path) else 2
            if chosen >= len(raw):
                return base.REMOVED
            return ctx.parse(
                raw[chosen], base.join_path(argpath, chosen), depth + 1
            )
        branches = [
            ctx.parse(item, base.join_path(argpath, n + 1), depth + 1)
            for n, item in enumerate(raw[1:])
        ]
        return cls(name, [cond] + branches, path, ctx)

    def references(self):
        yield from base.references(self.args[1:])

    def result(self, scope):
        cond = base.resolve(self.args[0], scope)
        chosen = 1 if truth(cond, scope, self.path) else 2
        if chosen >= len(self.args):
            return base.REMOVED
        return base.resolve_item(self.args[chosen], scope)


class Equals(base.Function):
    """A function for comparing whether two values are equal."""

    names = ("equals",)

    def validate(self, ctx):
        if not isinstance(self.args, list) or len(self.args) != 2:
            self.fail(
                'Arguments to "equals" must be of the form: [value_1, value_2]'
            )

    def result(self, scope):
        first, second = (base.resolve(a, scope) for a in self.args)
        return first == second


class _Boolean(base.Function):
    """Shared checks of ``not``, ``and`` and ``or``."""

    def conditions(self):
        return self.args if isinstance(self.args, list) else []

    def validate(self, ctx):
        if not isinstance(self.args, list):
            self.fail(
                'Arguments to "%s" must be a list of conditions' % self.name
            )
        if len(self.args) < 2:
            self.fail(
                'The minimum number of condition arguments to "%s" '
                "is 2." % self.name
            )
        for arg in self.args:
            check_condition_arg(arg, ctx, self.path)

    def condition_references(self):
        for arg in self.conditions():
            if isinstance(arg, str):
                yield arg
        yield from base.condition_references(self.conditions())

    def values(self, scope):
        for arg in self.conditions():
            yield truth(base.resolve(arg, scope), scope, self.path)


class Not(_Boolean):
    """A function that acts as a NOT operator on a condition."""

    names = ("not",)

    def conditions(self):
        return [self.args]

    def validate(self, ctx):
        if self.args is None:
            self.fail('Argument to "not" must be a condition')
        check_condition_arg(self.args, ctx, self.path)

    def result(self, scope):
        return not next(self.values(scope))


class And(_Boolean):
    """A function that acts as an AND operator on conditions."""

    names = ("and",)

    def result(self, scope):
        return all(self.values(scope))


class Or(_Boolean):
    """A function that acts as an OR operator on conditions."""

    names = ("or",)

    def result(self, scope):
        return any(self.values(scope))


class Contains(base.Function):
    """A function for checking whether specific value is in sequence."""

    names = ("contains",)

    def validate(self, ctx):
        if not self.args or not isinstance(self.args, list):
            self.fail(
                'Incorrect arguments to "contains" should be: '
                '"contains" : [ "value1", [ "value1", "value2"]]'
            )
        if len(self.args) != 2:
            self.fail(
                'Arguments to "contains" must be of the form: '
                "[value1, [value1, value2]]"
            )

    def result(self, scope):
        value, sequence = (base.resolve(a, scope) for a in self.args)
        if isinstance(sequence, str) and isinstance(value, str):
            return value in sequence
        if not base.is_list(sequence):
            self.fail('Second argument to "contains" should be a sequence.')
        return value in sequence


FUNCTIONS = (If, Equals, Not, And, Or, Contains)
