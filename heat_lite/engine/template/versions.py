"""HOT versions: which functions each ``heat_template_version`` allows.

One table says, per version, which functions it adds and removes, which
functions are valid inside conditions, and which other features it brings
(the ``conditions`` section, parameter ``tags``...). Everything else in
the package asks this module rather than comparing dates itself, except
for the few functions whose *behaviour* changed between versions, which
compare the canonical ``YYYY-MM-DD`` strings (they sort as dates).
"""

import datetime

from heat_lite.common import exception

PREFIX = "heat_template_version"

_BASE = (
    "get_param",
    "get_resource",
    "get_attr",
    "get_file",
    "list_join",
    "str_replace",
    "resource_facade",
)
# The CloudFormation functions HOT 2013-05-23 still understood.
_CFN = (
    "Fn::GetAZs",
    "Ref",
    "Fn::Select",
    "Fn::Join",
    "Fn::Split",
    "Fn::Replace",
    "Fn::Base64",
    "Fn::MemberListToMap",
    "Fn::ResourceFacade",
)
_COND_BASE = ("get_param", "equals", "not", "and", "or")

# (version, alias, functions added, functions removed,
#  condition functions added)
_HISTORY = [
    ("2013-05-23", None, _BASE + _CFN, (), ()),
    ("2014-10-16", None, (), tuple(f for f in _CFN if f != "Fn::Select"), ()),
    ("2015-04-30", None, ("repeat", "digest"), (), ()),
    ("2015-10-15", None, ("str_split",), ("Fn::Select",), ()),
    ("2016-04-08", None, ("map_merge",), (), ()),
    ("2016-10-14", "newton", ("yaql", "map_replace", "if"), (), _COND_BASE),
    ("2017-02-24", "ocata", ("filter", "str_replace_strict"), (), ()),
    (
        "2017-09-01",
        "pike",
        (
            "make_url",
            "list_concat",
            "list_concat_unique",
            "str_replace_vstrict",
            "contains",
        ),
        (),
        ("yaql", "contains"),
    ),
    ("2018-03-02", "queens", (), (), ()),
    ("2018-08-31", "rocky", (), (), ()),
    ("2021-04-16", "wallaby", (), (), ()),
]

# Features that are not functions, by the version that introduced them.
CONDITIONS = "2016-10-14"  # conditions section, condition, external_id
LOWER_DELETION_POLICY = "2016-10-14"
MODULO = "2017-02-24"  # parameter constraint
TAGS = "2018-03-02"  # parameter key
IF_NULLABLE = "2021-04-16"  # two-argument if


def _build():
    table, removed, conds, aliases, added_in = {}, {}, {}, {}, {}
    current, gone, cond = set(), set(), set()
    for version, alias, added, dropped, cond_added in _HISTORY:
        current = (current | set(added)) - set(dropped)
        gone |= set(dropped)
        cond |= set(cond_added)
        table[version] = frozenset(current)
        removed[version] = frozenset(gone)
        conds[version] = frozenset(cond)
        for name in added:
            added_in.setdefault(name, version)
        for name in cond_added:
            added_in.setdefault(name, version)
        if alias:
            aliases[alias] = version
    return table, removed, conds, aliases, added_in


FUNCTIONS, REMOVED, CONDITION_FUNCTIONS, ALIASES, ADDED_IN = _build()
VERSIONS = [v for v, *_ in _HISTORY]
ALL_FUNCTIONS = frozenset(ADDED_IN)


def _invalid(value):
    choices = ", ".join(VERSIONS + sorted(ALIASES))
    return exception.InvalidTemplateVersion(
        explanation='"%s: %s". "%s" should be one of: %s'
        % (PREFIX, value, PREFIX, choices)
    )


def normalise(value):
    """Return the canonical ``YYYY-MM-DD`` of a version value.

    YAML turns an unquoted date into ``datetime.date``; aliases map to
    their date; the ``heat_template_version.`` prefix of the API's version
    names is accepted too.

    :raises InvalidTemplateVersion: if the value is not a HOT version.
    """
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        value = value.isoformat()
    if not isinstance(value, str):
        raise _invalid(value)
    if value.startswith(PREFIX + "."):
        value = value[len(PREFIX) + 1 :]
    value = ALIASES.get(value, value)
    if value not in FUNCTIONS:
        raise _invalid(value)
    return value


def condition_functions(version):
    """Functions allowed in ``conditions`` for ``version``."""
    return CONDITION_FUNCTIONS[normalise(version)]


def list_versions():
    """The list ``GET /template_versions`` returns, oldest first."""
    by_version = {v: k for k, v in ALIASES.items()}
    result = []
    for version in VERSIONS:
        alias = by_version.get(version)
        result.append(
            {
                "version": "%s.%s" % (PREFIX, version),
                "type": "hot",
                "aliases": ["%s.%s" % (PREFIX, alias)] if alias else [],
            }
        )
    return result


def list_functions(version, with_condition_func=False):
    """The list ``GET /template_versions/{v}/functions`` returns.

    :param version: ``heat_template_version.2016-10-14``, a date or alias.
    :param with_condition_func: also list the condition-only functions.
    :raises NotFound: for a version that is not a HOT version.
    """
    from heat_lite.engine.template import functions

    try:
        canonical = normalise(version)
    except exception.InvalidTemplateVersion:
        raise exception.NotFound(
            message="Template with version %s not found" % version
        ) from None
    names = set(FUNCTIONS[canonical])
    if with_condition_func:
        names |= CONDITION_FUNCTIONS[canonical]
    return [
        {"functions": name, "description": functions.describe(name)}
        for name in sorted(names)
    ]
