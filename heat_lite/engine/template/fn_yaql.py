"""The ``yaql`` function: evaluate a YAQL expression on given data.

The YAQL engine is built once per process, on first use (importing yaql
and building its grammar takes over half a second), with Heat's limits:
an expression may iterate over at most 200 items and use at most 10,000
bytes. Literal expressions are parsed when the template is, so a syntax
error is a validation error.
"""

# yaql 3.x uses ``collections.abc`` without importing it: import it first.
import collections.abc
import math

from heat_lite.engine.template import base

LIMIT_ITERATORS = 200
MEMORY_QUOTA = 10000
_ENGINE = {}


def _engine():
    if not _ENGINE:
        import yaql
        from yaql.language import exceptions

        _ENGINE["errors"] = exceptions.YaqlException
        _ENGINE["parser"] = yaql.YaqlFactory().create(
            {
                "yaql.limitIterators": LIMIT_ITERATORS,
                "yaql.memoryQuota": MEMORY_QUOTA,
            }
        )
        _ENGINE["context"] = yaql.create_context()
    return _ENGINE["parser"], _ENGINE["context"]


class Yaql(base.Function):
    """A function for executing a yaql expression.

    ``yaql: {expression: <text>, data: <anything>}``; the data is ``$.data``.
    """

    names = ("yaql",)
    USAGE = (
        '"yaql" syntax should be yaql:\n  expression: $.data.var1.sum()'
        "\n  data:\n    var1: [3, 2, 1]"
    )

    def validate(self, ctx):
        if not isinstance(self.args, collections.abc.Mapping):
            self.fail('Arguments to "yaql" must be a map.')
        if "expression" not in self.args or set(self.args) - {
            "expression",
            "data",
        }:
            self.fail(self.USAGE)
        if not isinstance(self.args["expression"], base.Function):
            self._parse(self.args["expression"])

    def _parse(self, expression):
        if not isinstance(expression, str):
            self.fail(
                'The "expression" argument to yaql must contain a string.'
            )
        parser, _context = _engine()
        try:
            return parser(expression)
        except (_ENGINE["errors"], TypeError, ValueError, IndexError) as exc:
            # the grammar code raises plain errors on some odd input too
            self.fail("Bad expression %s." % exc)

    def result(self, scope):
        args = self.resolve_args(scope)
        statement = self._parse(args.get("expression"))
        data = args.get("data", {})
        base.check_depth(data, self.path)
        _parser, context = _engine()
        try:
            value = statement.evaluate(
                {"data": data}, context.create_child_context()
            )
        except RecursionError:
            self.fail("The yaql expression nests too deeply")
        except Exception as exc:
            # An expression can fail in any way its library functions do
            # (TypeError, ZeroDivisionError, KeyError...); to the user all
            # of them are the same thing: a bad expression for this data.
            self.fail(
                "Error evaluating yaql expression: %s: %s"
                % (type(exc).__name__, exc)
            )
        base.check_depth(value, self.path)
        if _non_finite(value):
            # float("nan"), float("inf"), $.x * $.x overflowing...
            self.fail(
                "The yaql expression gave NaN or Infinity, which JSON "
                "cannot carry"
            )
        return value


def _non_finite(value):
    """Whether ``value`` holds NaN or an Infinity (iterative: after
    ``check_depth``, so bounded)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, collections.abc.Mapping):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending.extend(item)
    return False


FUNCTIONS = (Yaql,)
