"""Declarative property schemas of resource plugins."""

import math
import numbers

from heat_lite.common import exception

STRING, INTEGER, NUMBER, BOOLEAN, MAP, LIST, ANY = (
    "String",
    "Integer",
    "Number",
    "Boolean",
    "Map",
    "List",
    "Any",
)


class Schema:
    """The schema of one property.

    :param schema: for a Map, a {key: Schema} of its members; for a List,
        the Schema of every item (or a {key: Schema} for lists of maps).
    :param constraints: ``resources.constraints`` objects.
    :param update_allowed: changing it updates in place; otherwise a
        change replaces the resource.
    :param immutable: it may never change once created (the update
        fails).
    """

    def __init__(
        self,
        type,
        description="",
        default=None,
        required=False,
        update_allowed=False,
        immutable=False,
        schema=None,
        constraints=None,
    ):
        self.type = type
        self.description = description
        self.default = default
        self.required = required
        self.update_allowed = update_allowed
        self.immutable = immutable
        self.schema = schema
        self.constraints = constraints or []

    def coerce(self, value, path):
        """Return ``value`` as this schema's type, or raise."""
        if value is None:
            return None
        checker = _CHECKS[self.type]
        try:
            value = checker(value)
            for constraint in self.constraints:
                constraint.check(value)
        except (TypeError, ValueError) as exc:
            raise exception.StackValidationFailed(
                path=path, msg=str(exc)
            ) from None
        if self.type == MAP and isinstance(self.schema, dict):
            value = validate(self.schema, value, path)
        elif self.type == LIST and self.schema is not None:
            item = (
                self.schema
                if isinstance(self.schema, Schema)
                else Schema(MAP, schema=self.schema)
            )
            value = [
                item.coerce(v, "%s[%d]" % (path, i))
                for i, v in enumerate(value)
            ]
        return value

    def to_dict(self):
        """The schema as ``GET /resource_types/{type}`` shows it."""
        result = {
            "type": self.type.lower(),
            "description": self.description,
            "required": self.required,
            "update_allowed": self.update_allowed,
            "immutable": self.immutable,
        }
        if self.default is not None:
            result["default"] = self.default
        if self.constraints:
            result["constraints"] = [c.to_dict() for c in self.constraints]
        if isinstance(self.schema, dict):
            result["schema"] = {k: v.to_dict() for k, v in self.schema.items()}
        elif isinstance(self.schema, Schema):
            result["schema"] = {"*": self.schema.to_dict()}
        return result


def constrained_values(schema, values, name):
    """The string values of ``values`` (a resource's properties, by
    ``schema``: {key: Schema}) whose schema carries the custom constraint
    ``name`` (``"glance.image"``), at any depth of maps and lists."""
    found = []
    _collect(schema or {}, values or {}, name, found)
    return found


def has_constraint(schema, name):
    """Whether any property of ``schema`` ({key: Schema}), at any depth,
    carries the custom constraint ``name``."""
    for sub in (schema or {}).values():
        if name in _names(sub):
            return True
        inner = sub.schema
        if isinstance(inner, Schema):
            inner = {"*": inner}
        if isinstance(inner, dict) and has_constraint(inner, name):
            return True
    return False


def _names(schema):
    return {
        getattr(c, "name", None) for c in getattr(schema, "constraints", ())
    }


def _collect(schema, values, name, found):
    for key, sub in schema.items():
        _collect_one(sub, values.get(key), name, found)


def _collect_one(sub, value, name, found):
    if value is None:
        return
    if isinstance(value, str):
        if name in _names(sub):
            found.append(value)
        return
    if sub.type == MAP and isinstance(sub.schema, dict):
        if isinstance(value, dict):
            _collect(sub.schema, value, name, found)
    elif (
        sub.type == LIST and sub.schema is not None and isinstance(value, list)
    ):
        item = (
            sub.schema
            if isinstance(sub.schema, Schema)
            else Schema(MAP, schema=sub.schema)
        )
        for member in value:
            _collect_one(item, member, name, found)


class Attribute:
    """The schema of one attribute."""

    def __init__(self, description="", type=None):
        self.description = description
        self.type = type

    def to_dict(self):
        result = {"description": self.description}
        if self.type:
            result["type"] = self.type
        return result


def attribute_schema(schema):
    """Normalise ``attributes_schema`` values (a description string is
    accepted as shorthand) to ``Attribute`` objects."""
    return {
        name: value if isinstance(value, Attribute) else Attribute(str(value))
        for name, value in schema.items()
    }


def _string(value):
    if isinstance(value, (dict, list)):
        raise TypeError("Value must be a string")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _integer(value):
    if isinstance(value, bool):
        raise TypeError("Value must be an integer")
    if isinstance(value, numbers.Integral):
        return int(value)
    try:
        return int(str(value))
    except ValueError:
        raise ValueError("Value '%s' is not an integer" % value) from None


def _number(value):
    if isinstance(value, bool):
        raise TypeError("Value must be a number")
    number = value
    if not isinstance(value, numbers.Number):
        text = str(value)
        try:
            number = (
                float(text) if any(c in text for c in ".eE") else int(text)
            )
        except ValueError:
            raise ValueError("Value '%s' is not a number" % value) from None
    if isinstance(number, float) and not math.isfinite(number):
        # "1e999", or a get_attr of a cloud's answer: no JSON number.
        raise ValueError("Value '%s' is not a finite number" % value)
    return number


def _boolean(value):
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "t", "on", "yes", "y", "1"):
        return True
    if text in ("false", "f", "off", "no", "n", "0"):
        return False
    raise ValueError('"%s" is not a valid boolean' % value)


def _map(value):
    if not isinstance(value, dict):
        raise TypeError('"%s" is not a map' % (value,))
    return value


def _list(value):
    if isinstance(value, (str, dict)) or not hasattr(value, "__iter__"):
        raise TypeError('"%s" is not a list' % (value,))
    return list(value)


_CHECKS = {
    STRING: _string,
    INTEGER: _integer,
    NUMBER: _number,
    BOOLEAN: _boolean,
    MAP: _map,
    LIST: _list,
    ANY: lambda v: v,
}


def translate(renames, values, path, unresolved=()):
    """Heat's REPLACE translation rules for deprecated property names.

    ``renames`` is {deprecated name: its new name}; a value given under a
    deprecated name is taken as the new name's (the deprecated name is
    not part of the schema: Heat hides it). Giving both is refused, in
    Heat's words.

    :returns: (values, unresolved), translated.
    :raises StackValidationFailed: both names given.
    """
    if not renames or not isinstance(values, dict):
        return values, unresolved
    values, unresolved = dict(values), list(unresolved)
    for old, new in renames.items():
        old_given = values.get(old) is not None or old in unresolved
        if not old_given:
            continue
        if values.get(new) is not None or new in unresolved:
            raise exception.StackValidationFailed(
                path=path,
                msg="Cannot define the following properties at the same "
                "time: %s, %s." % (new, old),
            )
        if old in unresolved:
            unresolved[unresolved.index(old)] = new
            values.pop(old, None)
        else:
            values[new] = values.pop(old)
    return values, tuple(unresolved)


def validate(schema, values, path, unresolved=()):
    """Return the properties with defaults applied and types coerced.

    ``schema`` None accepts anything (e.g. OS::Heat::None). Names in
    ``unresolved`` come from functions that cannot be resolved yet; they
    are neither required nor type-checked.

    :raises StackValidationFailed: naming the property path.
    """
    values = values or {}
    if schema is None:
        return dict(values)
    if not isinstance(values, dict):
        raise exception.StackValidationFailed(
            path=path, msg="Properties must be a map"
        )
    for key in list(values) + list(unresolved):
        if key not in schema:
            raise exception.StackValidationFailed(
                path=path, msg="Unknown Property %s" % key
            )
    result = {}
    for key, prop in schema.items():
        if key in unresolved:
            continue
        value = values.get(key)
        if value is None:
            value = prop.default
        if value is None and prop.required:
            raise exception.StackValidationFailed(
                path="%s.%s" % (path, key),
                msg="Property %s not assigned" % key,
            )
        result[key] = prop.coerce(value, "%s.%s" % (path, key))
    return result
