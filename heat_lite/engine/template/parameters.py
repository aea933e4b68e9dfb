"""Template parameters: declarations, user values, coercion and display."""

import json

from heat_lite.common import exception

TYPES = ("string", "number", "comma_delimited_list", "json", "boolean")
PSEUDO = ("OS::stack_name", "OS::stack_id", "OS::project_id")
_KEYS = {"type", "label", "description", "default", "hidden", "constraints",
         "immutable", "tags"}
_TRUE = {"1", "t", "true", "on", "y", "yes"}
_FALSE = {"0", "f", "false", "off", "n", "no"}


class Parameter:
    """One declared parameter."""

    def __init__(self, name, schema):
        path = "parameters.%s" % name
        if not isinstance(schema, dict):
            raise exception.StackValidationFailed(
                path=path, msg="Parameter definition must be a mapping")
        unknown = set(schema) - _KEYS
        if unknown:
            raise exception.StackValidationFailed(
                path=path, msg='Invalid key "%s" for parameter' %
                sorted(unknown)[0])
        self.name = name
        self.type = schema.get("type")
        if self.type not in TYPES:
            raise exception.StackValidationFailed(
                path=path, msg='Invalid type (%s)' % self.type)
        self.label = schema.get("label")
        self.description = schema.get("description", "")
        self.hidden = bool(schema.get("hidden", False))
        self.immutable = bool(schema.get("immutable", False))
        self.has_default = "default" in schema
        self.default = schema.get("default")
        if self.has_default and self.default is not None:
            self.default = self.coerce(self.default)

    def coerce(self, value):
        """Return ``value`` as this parameter's type.

        :raises StackValidationFailed: if the value does not fit.
        """
        try:
            return getattr(self, "_coerce_" + self.type)(value)
        except (ValueError, TypeError) as exc:
            raise exception.StackValidationFailed(
                path="parameters.%s" % self.name,
                msg="Value '%s' is invalid: %s" % (value, exc)) from None

    @staticmethod
    def _coerce_string(value):
        if isinstance(value, (dict, list)):
            raise ValueError("expected a string")
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    @staticmethod
    def _coerce_number(value):
        if isinstance(value, bool):
            raise ValueError("expected a number")
        if isinstance(value, (int, float)):
            return value
        text = str(value).strip()
        try:
            return int(text)
        except ValueError:
            return float(text)

    @staticmethod
    def _coerce_comma_delimited_list(value):
        if isinstance(value, list):
            return [str(v) for v in value]
        if not isinstance(value, str):
            raise ValueError("expected a list or a comma separated string")
        return [v.strip() for v in value.split(",")] if value else []

    @staticmethod
    def _coerce_json(value):
        if isinstance(value, (dict, list)):
            return value
        if isinstance(value, str):
            parsed = json.loads(value) if value else {}
            if not isinstance(parsed, (dict, list)):
                raise ValueError("expected a JSON map or list")
            return parsed
        raise ValueError("expected a JSON map or list")

    @staticmethod
    def _coerce_boolean(value):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError("expected a boolean")

    def display(self, value):
        """The string Heat shows for a value (stack show, environment)."""
        if self.hidden:
            return "******"
        if isinstance(value, bool):
            return "true" if value else "false"
        if self.type == "comma_delimited_list" and isinstance(value, list):
            return ",".join(str(v) for v in value)
        if self.type == "json":
            return json.dumps(value)
        return "" if value is None else str(value)


def parse_schema(section):
    """Return {name: Parameter} of a ``parameters`` section."""
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise exception.StackValidationFailed(
            path="parameters", msg="The parameters section must be a map")
    return {name: Parameter(name, schema) for name, schema in
            section.items()}


def resolve_values(schema, values, defaults=None):
    """Return {name: coerced value} for every declared parameter.

    :param values: values given by the user (``parameters``).
    :param defaults: ``parameter_defaults`` of the environment.
    :raises UnknownUserParameter: for a value of an undeclared parameter.
    :raises UserParameterMissing: for a parameter with no value at all.
    """
    values = values or {}
    defaults = defaults or {}
    for name in values:
        if name not in schema:
            raise exception.UnknownUserParameter(key=name)
    result = {}
    for name, param in schema.items():
        if name in values:
            result[name] = param.coerce(values[name])
        elif name in defaults:
            result[name] = param.coerce(defaults[name])
        elif param.has_default:
            result[name] = param.default
        else:
            raise exception.UserParameterMissing(key=name)
    return result
