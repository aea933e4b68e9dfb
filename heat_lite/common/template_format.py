"""Reading documents users send: templates, environments and files.

Every YAML or JSON text a user submits (the template, the environment,
each of ``files``, a nested template, a signal body) is read here, so the
same rules hold everywhere:

* the size limit is checked on the bytes received, before parsing;
* the text must be UTF-8;
* YAML aliases are refused (a few bytes of aliases describe a document
  that grows exponentially once walked or serialised);
* only plain data comes out: maps, lists, strings, numbers, booleans and
  null. Timestamps stay strings, as Heat reads them
  (``heat_template_version: 2018-08-31``); ``!!binary``, ``!!set`` and
  every other tag are refused. Keys become strings, as they would after
  the JSON round trip the database makes;
* nesting is bounded (``MAX_DEPTH``), for JSON as for YAML;
* numbers are finite: ``NaN``, ``Infinity`` (which Python's json reads)
  and ``.nan``, ``.inf`` or a float too large for a double (``1e999``,
  which would become Infinity) are refused: no JSON answer could carry
  them (``finite_float`` does the same for numbers given as strings).

Errors are ``exception.Invalid`` subclasses chosen by the caller, so each
kind of document keeps the message Heat gives for it.
"""

import json
import math

import yaml

from heat_lite.common import exception

# Containers nested deeper than this are refused (Heat's templates need a
# dozen levels at most; the engine walks trees recursively).
MAX_DEPTH = 100
_ALLOWED_TAGS = ("null", "bool", "int", "float", "str", "seq", "map")


class _Loader(yaml.SafeLoader):
    """SafeLoader without aliases, without non-data tags, depth-bounded."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases are not allowed", event.start_mark
            )
        if self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            if self._depth >= MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    "nested more than %d levels deep" % MAX_DEPTH,
                    self.peek_event().start_mark,
                )
            self._depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        """A dict whose keys are strings, as after a JSON round trip
        (``1: a`` and ``true: b`` are two keys, not one)."""
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None, None, "expected a mapping", node.start_mark
            )
        self.flatten_mapping(node)
        mapping = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found a key that is not a scalar",
                    key_node.start_mark,
                )
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                key = json.dumps(key)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def _refuse_constant(name):
    """json's hook for ``NaN``, ``Infinity`` and ``-Infinity``."""
    raise ValueError(
        "%s is not a JSON number (JSON has no NaN or Infinity)" % name
    )


def finite_float(text):
    """``float(text)``, refusing what no JSON number can be.

    :raises ValueError: nan, inf, infinity, or too large for a double.
    """
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(
            "%s is not a finite number (JSON has no NaN or Infinity)"
            % str(text).strip()
        )
    return value


def _construct_float(loader, node):
    value = yaml.SafeLoader.construct_yaml_float(loader, node)
    if not math.isfinite(value):
        raise yaml.constructor.ConstructorError(
            None,
            None,
            "%s is not a finite number (JSON has no NaN or Infinity)"
            % node.value,
            node.start_mark,
        )
    return value


_Loader.yaml_constructors = {
    "tag:yaml.org,2002:" + tag: yaml.SafeLoader.yaml_constructors[
        "tag:yaml.org,2002:" + tag
    ]
    for tag in _ALLOWED_TAGS
}
_Loader.add_constructor(
    "tag:yaml.org,2002:timestamp",
    lambda loader, node: loader.construct_scalar(node),
)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_Loader.add_constructor(None, yaml.SafeLoader.construct_undefined)
# Only the plain "str" resolver for timestamps: they stay strings.
_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag != "tag:yaml.org,2002:timestamp"
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def check_size(text, limit, what, error=exception.RequestLimitExceeded):
    """Refuse ``text`` (str or bytes) larger than ``limit`` bytes."""
    size = len(text) if isinstance(text, bytes) else _utf8_size(text, limit)
    if size > limit:
        raise error(
            message="%s size (%d bytes) exceeds maximum allowed "
            "size (%d bytes)." % (what, size, limit)
        )


def _utf8_size(text, limit):
    # Every character takes 1 to 4 bytes: encode only when it matters.
    if len(text) * 4 <= limit or len(text) > limit:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def check_depth(value, limit=MAX_DEPTH):
    """Raise ValueError if ``value`` nests containers deeper than
    ``limit`` (iterative: safe on any input)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise ValueError("nested more than %d levels deep" % limit)
        stack.extend((child, depth + 1) for child in children)


def loads_json(text, max_depth=MAX_DEPTH):
    """Parse JSON text or bytes into plain data.

    :param max_depth: containers nested deeper are refused.
    :raises ValueError: not UTF-8, not JSON, nested too deeply, or a
        number that is not finite (``NaN``, ``Infinity``, ``1e999``).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        value = json.loads(
            text, parse_constant=_refuse_constant, parse_float=finite_float
        )
    except RecursionError:
        raise ValueError(
            "nested more than %d levels deep" % max_depth
        ) from None
    check_depth(value, max_depth)
    return value


def loads(text):
    """Parse YAML (or JSON, which is YAML) text or bytes into plain data.

    :raises ValueError: not UTF-8, invalid, or nested too deeply.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if text.lstrip().startswith("{"):
        try:
            return loads_json(text)
        except ValueError:
            pass  # YAML flow style: let the YAML parser say what is wrong
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - safe loader
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        raise ValueError(
            "nested more than %d levels deep" % MAX_DEPTH
        ) from None


def parse(text, limit, what, error):
    """Size-check then parse a document; ``error(message=...)`` on a
    parse error, ``RequestLimitExceeded`` above ``limit`` bytes."""
    check_size(text, limit, what)
    try:
        return loads(text)
    except ValueError as exc:
        raise error(
            message="Error parsing %s: %s" % (what.lower(), exc)
        ) from None
