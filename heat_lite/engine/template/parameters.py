"""Template parameters: declarations, user values, coercion and display.

A ``Parameter`` is one entry of the ``parameters`` section. It turns a
user value (from the environment, so often a string) into a value of its
type, checks the constraints, and says how the value is shown (hidden
ones as ``******``). ``resolve_values`` gives every declared parameter
its value from the user's ``parameters``, the environment's
``parameter_defaults`` or the template default, in that order; falsy
values (``""``, ``false``, ``0``, ``[]``, ``{}``) are values like any
other, only ``null`` means "not given".
"""

import json

from heat_lite.common import exception, template_format
from heat_lite.engine.template import base, constraints, versions

TYPES = ("string", "number", "comma_delimited_list", "json", "boolean")
PSEUDO = ("OS::stack_name", "OS::stack_id", "OS::project_id")
HIDDEN_VALUE = "******"
_KEYS = (
    "type",
    "label",
    "description",
    "default",
    "hidden",
    "constraints",
    "immutable",
)
_TRUE = ("1", "t", "true", "on", "y", "yes")
_FALSE = ("0", "f", "false", "off", "n", "no")


def _flag(schema, key, path):
    value = schema.get(key, False)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise exception.StackValidationFailed(
            path="%s.%s" % (path, key), msg="%s must be a boolean" % key
        )
    return value


class Parameter:
    """One declared parameter (``name``, ``type``, ``default``...)."""

    def __init__(self, name, schema, version=versions.VERSIONS[-1]):
        path = "parameters.%s" % name
        self.name = name
        self.path = path
        if not isinstance(schema, dict):
            raise exception.StackValidationFailed(
                path=path, msg="Parameter definition must be a map"
            )
        allowed = _KEYS + (("tags",) if version >= versions.TAGS else ())
        for key in schema:
            if key not in allowed:
                raise exception.StackValidationFailed(
                    path=path,
                    msg="Invalid key '%s' for parameter (%s)" % (key, name),
                )
        if "type" not in schema:
            raise exception.StackValidationFailed(
                path=path,
                msg="Missing parameter type for parameter: %s" % name,
            )
        self.type = schema["type"]
        if self.type not in TYPES:
            raise exception.StackValidationFailed(
                path=path + ".type", msg="Invalid type (%s)" % (self.type,)
            )
        self.schema = schema
        self._read_text_keys(schema, path)
        self.hidden = _flag(schema, "hidden", path)
        self.immutable = _flag(schema, "immutable", path)
        self.constraints = constraints.parse(
            schema.get("constraints"),
            self.type,
            version,
            path + ".constraints",
        )
        self.has_default = schema.get("default") is not None
        self.default = None
        if self.has_default:
            self.default = self._checked_default(schema["default"])

    def _read_text_keys(self, schema, path):
        for key in ("label", "description"):
            value = schema.get(key)
            if value is not None and not isinstance(value, (str, int, float)):
                raise exception.StackValidationFailed(
                    path="%s.%s" % (path, key), msg="%s must be a string" % key
                )
        self.label = schema.get("label")
        self.description = str(schema.get("description", ""))
        tags = schema.get("tags")
        if tags is not None and not (
            isinstance(tags, list) and all(isinstance(t, str) for t in tags)
        ):
            raise exception.StackValidationFailed(
                path=path + ".tags", msg="tags must be a list of strings"
            )
        self.tags = tags

    def _checked_default(self, raw):
        """The coerced default; custom constraints are not applied to it."""
        try:
            value = self._coerce(raw)
            for constraint in self.constraints:
                if isinstance(constraint, constraints.CustomConstraint):
                    continue
                failure = constraint.check(value)
                if failure:
                    raise ValueError(failure)
        except (ValueError, TypeError) as exc:
            raise exception.StackValidationFailed(
                path=self.path + ".default",
                msg="Invalid default %s (%s)" % (raw, exc),
            ) from None
        return value

    def coerce(self, value):
        """Return ``value`` as this parameter's type, constraints checked.

        :raises StackValidationFailed: if the value does not fit.
        """
        try:
            typed = self._coerce(value)
            for constraint in self.constraints:
                failure = constraint.check(typed)
                if failure:
                    raise ValueError(failure)
        except (ValueError, TypeError) as exc:
            raise exception.StackValidationFailed(
                path=self.path,
                msg="Parameter '%s' is invalid: %s" % (self.name, exc),
            ) from None
        return typed

    validate = coerce

    def _coerce(self, value):
        base.check_depth(value, self.path)
        return getattr(self, "_coerce_" + self.type)(value)

    @staticmethod
    def _coerce_string(value):
        if isinstance(value, (dict, list)):
            raise ValueError("Value must be a string")
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    @staticmethod
    def _coerce_number(value):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(
                "Value must be a number, not %s" % base.short(value)
            )
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            # A merged sum (merge.py) can overflow to Infinity.
            return template_format.finite_float(value)
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            return template_format.finite_float(text)

    @staticmethod
    def _coerce_comma_delimited_list(value):
        if isinstance(value, list):
            return [
                v
                if isinstance(v, str)
                else json.dumps(v)
                if isinstance(v, (dict, list))
                else str(v)
                for v in value
            ]
        if not isinstance(value, str):
            raise ValueError(
                "Value must be a comma-delimited list string: "
                "%s" % base.short(value)
            )
        return value.split(",") if value else []

    @staticmethod
    def _coerce_json(value):
        if isinstance(value, (dict, list)):
            return value
        if isinstance(value, str):
            try:
                parsed = template_format.loads_json(value) if value else {}
            except ValueError as exc:
                raise ValueError(
                    "Value must be valid JSON: %s" % exc
                ) from None
            if not isinstance(parsed, (dict, list)):
                raise ValueError(
                    "Value must be valid JSON: expected a map or a list"
                )
            return parsed
        raise ValueError("Value must be valid JSON: %s" % base.short(value))

    @staticmethod
    def _coerce_boolean(value):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError(
            "Unrecognized value '%s', acceptable values are: %s"
            % (value, ", ".join("'%s'" % v for v in sorted(_TRUE + _FALSE)))
        )

    def display(self, value):
        """The string Heat shows for a value (stack show, environment)."""
        if self.hidden:
            return HIDDEN_VALUE
        if isinstance(value, bool):
            return "true" if value else "false"
        if self.type == "comma_delimited_list" and isinstance(value, list):
            return ",".join(str(v) for v in value)
        if self.type == "json":
            return json.dumps(value)
        return "" if value is None else str(value)

    def api_type(self):
        """The type name Heat's validate document uses (``Json``...)."""
        return {
            "string": "String",
            "number": "Number",
            "comma_delimited_list": "CommaDelimitedList",
            "json": "Json",
            "boolean": "Boolean",
        }[self.type]


def parse_schema(section, version=versions.VERSIONS[-1]):
    """Return {name: Parameter} of a ``parameters`` section."""
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise exception.StackValidationFailed(
            path="parameters", msg="The parameters section must be a map"
        )
    for name in section:
        if not isinstance(name, str):
            raise exception.StackValidationFailed(
                path="parameters.%s" % (name,),
                msg="Parameter names must be strings",
            )
    return {
        name: Parameter(name, schema, version)
        for name, schema in section.items()
    }


def _fitting(param, value, lenient):
    """``param.coerce(value)``; None instead of the error when lenient."""
    try:
        return param.coerce(value)
    except exception.StackValidationFailed:
        if lenient:
            return None
        raise


def resolve_values(schema, values, defaults=None, unknown=()):
    """Return {name: coerced value} for every declared parameter.

    :param values: values given by the user (``parameters``).
    :param defaults: ``parameter_defaults`` of the environment (names the
        template does not declare are ignored: they are for nested stacks).
    :raises UnknownUserParameter: for a value of an undeclared parameter.
    :param unknown: names whose value cannot be known yet (a preview of a
        nested stack whose parent passes an attribute) or need not fit (a
        validate, which as Heat's does not check the values it is given):
        None, not an error.
    :raises UserParameterMissing: for a parameter with no value at all.
    :raises StackValidationFailed: for a value that does not fit.
    """
    values = values or {}
    defaults = defaults or {}
    for name in values:
        if name not in schema:
            raise exception.UnknownUserParameter(key=name)
    result = {}
    for name, param in schema.items():
        if values.get(name) is not None:
            result[name] = _fitting(param, values[name], name in unknown)
        elif defaults.get(name) is not None:
            result[name] = _fitting(param, defaults[name], name in unknown)
        elif param.has_default:
            # A default that fails a custom constraint (an image the
            # cloud lacks): fine for a validate, as Heat checks defaults
            # without them; a create still refuses it.
            result[name] = _fitting(param, param.default, name in unknown)
        elif name in unknown:
            result[name] = None
        else:
            raise exception.UserParameterMissing(key=name)
    return result


def immutable_changes(schema, old_values, new_values):
    """Names of immutable parameters whose value differs, sorted."""
    return sorted(
        name
        for name, param in schema.items()
        if param.immutable
        and name in old_values
        and name in new_values
        and old_values[name] != new_values[name]
    )


def validate_groups(groups, schema):
    """Check ``parameter_groups`` against the declared parameters."""
    if groups is None:
        return
    error = "Parameter Groups error"
    if not isinstance(groups, list):
        raise exception.StackValidationFailed(
            error=error,
            path="parameter_groups",
            msg="The parameter_groups should be a list.",
        )
    seen = set()
    for index, group in enumerate(groups):
        if not isinstance(group, dict):
            raise exception.StackValidationFailed(
                error=error,
                path="parameter_groups[%d]" % index,
                msg="The parameter group should be a map.",
            )
        path = "parameter_groups.%s" % (group.get("label") or index,)
        names = group.get("parameters")
        if names is None:
            raise exception.StackValidationFailed(
                error=error,
                path=path,
                msg="The parameters must be "
                "provided for each parameter group.",
            )
        if not isinstance(names, list):
            raise exception.StackValidationFailed(
                error=error,
                path=path,
                msg='The "parameters" of parameter group should be a list.',
            )
        for name in names:
            if not isinstance(name, str) or name not in schema:
                raise exception.StackValidationFailed(
                    error=error,
                    path=path,
                    msg="The grouped parameter %s "
                    "does not reference a valid parameter." % (name,),
                )
            if name in seen:
                raise exception.StackValidationFailed(
                    error=error,
                    path=path,
                    msg="The %s parameter must be "
                    "assigned to one parameter group only." % name,
                )
            seen.add(name)
