"""The core every HOT function builds on: Scope, Function, tree walkers.

A template snippet is parsed once into a tree of plain data in which
function calls are ``Function`` objects; the tree is then resolved, many
times, against a ``Scope`` that supplies what the outside world knows
(parameter values, resource ids and attributes, files). Nothing here knows
a particular function: they live in the ``fn_*`` modules and are wired to
names in ``functions``.

Every walker is bounded: templates are checked for depth before they are
parsed (``check_depth``), so recursion over a parsed tree cannot run away,
and values that come from outside at resolve time are checked again where
a function recurses over them.
"""

import collections.abc
import json

from heat_lite.common import exception

MAX_DEPTH = 100
# Nodes visited by check_depth before giving up: YAML aliases can make a
# small document describe an exponentially large tree.
MAX_NODES = 1000000


class _Removed:
    """What a two-argument ``if`` with a false condition resolves to.

    Containers drop an item whose value is this marker, which is how the
    wallaby ``if`` removes "the enclosing item".
    """

    def __repr__(self):
        return "<removed>"


REMOVED = _Removed()


class Scope:
    """What functions can see while resolving. Subclassed by the engine.

    Every method may raise a typed ``HeatLiteException``; the defaults make
    an empty scope, useful for validation.

    * ``param(name)``: a parameter value (pseudo parameters included).
    * ``reference_id(resource_name)``: what ``get_resource`` returns.
    * ``attribute(resource_name, attribute, path)``: what ``get_attr``
      returns. ``path`` is a tuple of keys/indexes to select inside the
      attribute value (the scope selects: group resources need it, and it
      returns None when the path does not fit). The all-attributes form
      ``get_attr: [name]`` (HOT 2015-10-15 and later) calls
      ``attribute(name, None, ())`` and expects a dict of every attribute.
      HOT 2013-05-23 calls ``attribute(name, attr, ())`` and selects the
      path itself.
    * ``file(key)``: the content of ``files[key]`` for ``get_file``.
    * ``facade(kind)``: for ``resource_facade`` (``metadata``,
      ``deletion_policy`` or ``update_policy`` of the parent resource of a
      nested stack); None at the top level.
    * ``condition(name)``: the value of a named condition, needed only to
      resolve a template that was not bound (bound templates have their
      ``if`` functions already decided).
    """

    def param(self, name):
        raise exception.UserParameterMissing(key=name)

    def reference_id(self, resource_name):
        return resource_name

    def attribute(self, resource_name, attribute, path):
        return None

    def file(self, key):
        raise exception.StackValidationFailed(
            msg='No content found in the "files" section for get_file '
            "path: %s" % key
        )

    def facade(self, kind):
        return None

    def condition(self, name):
        raise exception.StackValidationFailed(
            msg='Invalid condition "%s"' % (name,)
        )


class Function:
    """A parsed call ``{name: args}`` whose ``args`` are already parsed.

    Subclasses set ``names`` (the template keys they implement), override
    ``validate`` to check the shape of the arguments at parse time and
    ``result`` to compute the value. The first line of the class docstring
    is the description ``GET /template_versions/{v}/functions`` shows.
    """

    names = ()

    def __init__(self, name, args, path, ctx):
        self.name = name
        self.args = args
        self.path = path
        self.version = ctx.version
        self.validate(ctx)

    @classmethod
    def build(cls, ctx, name, raw_args, path, depth):
        """Parse the raw arguments and return the parsed call.

        Overridden by functions that decide at parse time (``if``) or
        parse their arguments in another context (conditions).
        """
        args = ctx.parse(raw_args, join_path(path, name), depth + 1)
        return cls(name, args, path, ctx)

    def validate(self, ctx):
        """Check the shape of ``args``; raise StackValidationFailed."""

    def result(self, scope):
        raise NotImplementedError

    def references(self):
        """Yield (resource name, path) for each resource referred to."""
        yield from references(self.args)

    def condition_references(self):
        """Yield the condition names this call refers to literally."""
        yield from condition_references(self.args)

    def fail(self, msg):
        raise exception.StackValidationFailed(path=self.path, msg=msg)

    def resolve_args(self, scope):
        return resolve(self.args, scope)

    def __repr__(self):
        return "<%s %r>" % (self.name, self.args)


def join_path(path, key):
    """``resources.web`` + ``properties`` -> ``resources.web.properties``."""
    if isinstance(key, int) and not isinstance(key, bool):
        return "%s[%d]" % (path, key)
    return "%s.%s" % (path, key) if path else str(key)


def _children(value):
    # Templates are plain dicts and lists (JSON/YAML): checking those
    # types first is much faster than the abstract Mapping check.
    if isinstance(value, dict):
        return value.values()
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return value.values()
    return None


def check_depth(value, path="", limit=MAX_DEPTH):
    """Raise StackValidationFailed if ``value`` nests deeper than ``limit``.

    Iterative, so it is safe on any input (including the self-referencing
    lists YAML anchors can build), and bounded in the nodes it visits.
    """
    pending = [(value, 1)]
    visited = 0
    while pending:
        item, depth = pending.pop()
        children = _children(item)
        if children is None:
            continue
        visited += 1
        if depth > limit:
            raise exception.StackValidationFailed(
                path=path, msg="Nesting is deeper than %d levels" % limit
            )
        if visited > MAX_NODES:
            raise exception.StackValidationFailed(
                path=path, msg="Document has more than %d nodes" % MAX_NODES
            )
        pending.extend((child, depth + 1) for child in children)


def _resolve(parsed, scope):
    if isinstance(parsed, Function):
        return parsed.result(scope)
    if isinstance(parsed, dict):
        result = {}
        for key, value in parsed.items():
            value = _resolve(value, scope)
            if value is not REMOVED:
                result[key] = value
        return result
    if isinstance(parsed, list):
        result = []
        for value in parsed:
            value = _resolve(value, scope)
            if value is not REMOVED:
                result.append(value)
        return result
    return parsed


def resolve(parsed, scope):
    """Return ``parsed`` with every function replaced by its result."""
    value = _resolve(parsed, scope)
    return None if value is REMOVED else value


def resolve_item(parsed, scope):
    """Like ``resolve`` but may return ``REMOVED`` (for ``if``)."""
    return _resolve(parsed, scope)


def references(parsed):
    """Return [(resource name, path)] for every reference in ``parsed``."""
    found = []
    _collect_references(parsed, found)
    return found


def _collect_references(parsed, found):
    if isinstance(parsed, Function):
        found.extend(parsed.references())
    elif isinstance(parsed, dict):
        for value in parsed.values():
            _collect_references(value, found)
    elif isinstance(parsed, list):
        for value in parsed:
            _collect_references(value, found)


def dependencies(parsed):
    """Yield the resource names referred to anywhere in ``parsed``."""
    for name, _path in references(parsed):
        yield name


def condition_references(parsed):
    """Yield the condition names ``parsed`` refers to by name."""
    if isinstance(parsed, Function):
        yield from parsed.condition_references()
    elif isinstance(parsed, collections.abc.Mapping):
        for value in parsed.values():
            yield from condition_references(value)
    elif isinstance(parsed, list):
        for value in parsed:
            yield from condition_references(value)


def contains_function(parsed, names=None):
    """Whether ``parsed`` holds a Function (one of ``names`` if given)."""
    if isinstance(parsed, Function):
        return (
            names is None
            or parsed.name in names
            or contains_function(parsed.args, names)
        )
    children = _children(parsed)
    return bool(children) and any(
        contains_function(c, names) for c in children
    )


def to_json(value, fn):
    """JSON text of a list or map, keys sorted, as Heat serialises them.

    :raises StackValidationFailed: naming ``fn`` if it cannot be encoded.
    """
    try:
        check_depth(value, fn.path)
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        fn.fail(
            '"%s" params must be strings, numbers, list or map. '
            "Failed to json serialize %s" % (fn.name, short(value))
        )


def short(value):
    """A repr safe to put in a message."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200]


def is_list(value):
    """A list-like value (strings and maps are not lists)."""
    return isinstance(value, (list, tuple))
