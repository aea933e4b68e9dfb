"""Server-side merge of ``environment_files``, as Heat does it.

Each file, in order, is parsed and merged on top of what came before:
``parameters`` and ``parameter_defaults`` value by value with the
file's ``parameter_merge_strategies`` (``overwrite`` by default,
``merge``: strings concatenated, lists extended, maps updated, numbers
added; ``deep_merge``: maps merged recursively), the other map sections
key by key (later wins) and the list sections extended. A parameter
merged with different strategies by different files is an error.
"""

import copy

from heat_lite.common import exception, template_format
from heat_lite.engine.template import environment

STRATEGIES = (OVERWRITE, MERGE, DEEP_MERGE) = (
    "overwrite",
    "merge",
    "deep_merge",
)


def _strategy(in_file, key, chosen):
    """The strategy of ``key``: this file's, an earlier file's, default."""
    default = in_file.get("default", OVERWRITE)
    if default not in STRATEGIES:
        default = OVERWRITE
    strategy = in_file.get(key, chosen.get(key, default))
    return strategy if strategy in STRATEGIES else default


def merge_files(base_env, environment_files, files, param_schemata=None):
    """Return ``base_env`` with ``environment_files`` merged on top.

    :param base_env: the environment sent with the request (any form
        ``environment.parse`` accepts).
    :param environment_files: ordered names of files in ``files``.
    :param files: the request's files map (text or parsed mappings).
    :param param_schemata: optional {name: Parameter} of the template; the
        parameter type then decides how ``merge`` combines values.
    :raises StackValidationFailed: for a missing file or a bad environment.
    :raises ConflictingMergeStrategyForParam, InvalidMergeStrategyForParam.
    """
    result = environment.parse(base_env)
    chosen = {}
    for name in environment_files or ():
        if not isinstance(files, dict) or name not in files:
            raise exception.StackValidationFailed(
                path="environment_files",
                msg='Environment file "%s" is not in the files map' % (name,),
            )
        env = environment.parse(files[name])
        in_file = env.pop("parameter_merge_strategies")
        for section, value in env.items():
            if not value:
                continue
            if section in ("parameters", "parameter_defaults"):
                _merge_parameters(
                    result[section],
                    value,
                    in_file,
                    chosen,
                    name,
                    param_schemata or {},
                )
            elif isinstance(value, list):
                result[section].extend(copy.deepcopy(value))
            else:
                result[section].update(copy.deepcopy(value))
    return result


def _merge_parameters(old, new, in_file, chosen, env_file, schemata):
    for key, value in new.items():
        if value is None:
            continue
        strategy = _strategy(in_file, key, chosen)
        if chosen.setdefault(key, strategy) != strategy:
            raise exception.ConflictingMergeStrategyForParam(
                strategy=strategy, param=key, env_file=env_file
            )
    for key, value in new.items():
        if value is None:
            continue
        value = copy.deepcopy(value)
        strategy = chosen[key]
        if strategy == OVERWRITE or old.get(key) is None:
            old[key] = value
            continue
        param = schemata.get(key)
        old[key] = _combine(
            old[key],
            value,
            getattr(param, "type", None),
            strategy == DEEP_MERGE,
            key,
        )


def _combine(old, new, param_type, deep, key):
    """``merge``/``deep_merge`` of one parameter value."""
    if param_type == "boolean" or isinstance(new, bool):
        raise exception.InvalidMergeStrategyForParam(
            strategy=DEEP_MERGE if deep else MERGE, param=key
        )
    if param_type == "json" or isinstance(new, dict):
        return merge_maps(_as_json(old, key), _as_json(new, key), deep)
    if param_type == "comma_delimited_list" or isinstance(new, list):
        if isinstance(old, str) and isinstance(new, str):
            return ",".join(v for v in (old, new) if v)
        return _as_list(old) + _as_list(new)
    if param_type == "number" or isinstance(new, (int, float)):
        try:
            return _number(old) + _number(new)
        except (TypeError, ValueError):
            raise exception.InvalidMergeStrategyForParam(
                strategy=MERGE, param=key
            ) from None
    return "%s%s" % (old, new)


def merge_maps(old, new, deep=False):
    """Update ``old`` with ``new``; recursively for maps when ``deep``.

    With ``deep``, lists are extended and strings concatenated too, as
    Heat's deep_merge does.
    """
    result = dict(old)
    for key, value in new.items():
        if value is None:
            continue
        current = result.get(key)
        if not deep or current is None:
            result[key] = value
        elif isinstance(value, dict) and isinstance(current, dict):
            result[key] = merge_maps(current, value, deep)
        elif isinstance(value, list) and isinstance(current, list):
            result[key] = current + value
        elif isinstance(value, str) and isinstance(current, str):
            result[key] = current + value
        else:
            result[key] = value
    return result


def _as_json(value, key):
    if isinstance(value, str):
        try:
            value = template_format.loads_json(value) if value else {}
        except ValueError:
            raise exception.InvalidMergeStrategyForParam(
                strategy=MERGE, param=key
            ) from None
    if not isinstance(value, dict):
        raise exception.InvalidMergeStrategyForParam(strategy=MERGE, param=key)
    return value


def _as_list(value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return value.split(",") if value else []
    return [value]


def _number(value):
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, (int, float)):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        return float(text)
