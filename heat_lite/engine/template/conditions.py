"""The ``conditions`` section: parse once, evaluate per parameter set.

Each condition is a boolean or a condition expression (``equals``,
``not``, ``and``, ``or``, ``get_param``; ``contains`` and ``yaql`` from
2017-09-01) that may refer to other conditions by name. Names are checked
and circular definitions rejected when the template is parsed; the values
are computed when it is bound, since they depend on parameters.
"""

import collections

from heat_lite.common import exception
from heat_lite.engine.template import base, fn_conditions

ERROR = "Condition validation error"
_IN_PROGRESS = object()


def _invalid(name, definition):
    return exception.StackValidationFailed(
        error=ERROR,
        path="conditions.%s" % (name,),
        msg='The definition of condition "%s" is invalid: %s'
        % (name, base.short(definition)),
    )


class Conditions:
    """The parsed ``conditions`` section."""

    def __init__(self, section, ctx):
        """:param ctx: a ParseContext (its condition context is used)."""
        if section is None:
            section = {}
        if not isinstance(section, dict):
            raise exception.StackValidationFailed(
                error=ERROR,
                path="conditions",
                msg="The conditions section must be a map",
            )
        cond_ctx = ctx.condition_context()
        self.definitions = collections.OrderedDict()
        for name, definition in section.items():
            if not isinstance(name, str):
                raise _invalid(name, definition)
            parsed = cond_ctx.parse(definition, "conditions.%s" % name)
            if not isinstance(parsed, (bool, base.Function)):
                raise _invalid(name, definition)
            self.definitions[name] = parsed
        self.order = self._order()

    def names(self):
        return set(self.definitions)

    def _order(self):
        """Names so that each comes after those it refers to.

        :raises StackValidationFailed: for a circular definition.
        """
        refs = {
            name: set(base.condition_references(defn))
            for name, defn in self.definitions.items()
        }
        waiting = {name: len(r) for name, r in refs.items()}
        users = collections.defaultdict(list)
        for name, used in refs.items():
            for other in used:
                users[other].append(name)
        ready = collections.deque(n for n, c in waiting.items() if not c)
        order = []
        while ready:
            name = ready.popleft()
            order.append(name)
            for user in users[name]:
                waiting[user] -= 1
                if not waiting[user]:
                    ready.append(user)
        if len(order) != len(self.definitions):
            name = next(n for n in self.definitions if waiting[n])
            raise exception.StackValidationFailed(
                error=ERROR,
                path="conditions.%s" % name,
                msg='Circular definition for condition "%s"' % name,
            )
        return order

    def evaluate(self, params_scope):
        """Return {name: bool} for every condition.

        :param params_scope: a Scope whose ``param`` gives parameter values.
        """
        scope = ConditionScope(self, params_scope)
        for name in self.order:
            scope.condition(name)
        return dict(scope.values)


class ConditionScope(base.Scope):
    """A scope that knows parameters and evaluates conditions on demand."""

    def __init__(self, conditions, params_scope, values=None):
        self.conditions = conditions
        self.params_scope = params_scope
        self.values = dict(values or {})

    def param(self, name):
        return self.params_scope.param(name)

    def file(self, key):
        return self.params_scope.file(key)

    def condition(self, name):
        value = self.values.get(name)
        if isinstance(value, bool):
            return value
        if value is _IN_PROGRESS:
            raise exception.StackValidationFailed(
                error=ERROR,
                path="conditions.%s" % name,
                msg='Circular definition for condition "%s"' % name,
            )
        definition = self.conditions.definitions.get(name)
        if definition is None:
            raise exception.StackValidationFailed(
                msg='Invalid condition "%s"' % (name,)
            )
        self.values[name] = _IN_PROGRESS
        try:
            result = base.resolve(definition, self)
        finally:
            self.values.pop(name, None)
        if not isinstance(result, bool):
            raise _invalid(name, result)
        self.values[name] = result
        return result


def decide(parsed, scope, path):
    """The boolean of a parsed ``condition`` value (name, bool, expression)."""
    if parsed is None:
        return True
    return fn_conditions.truth(base.resolve(parsed, scope), scope, path)
