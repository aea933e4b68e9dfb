"""Property tests: whatever the template, only typed errors escape.

Random templates (built from function calls of every kind with random
arguments), mutated corpus templates and random parameter values go
through parse, bind, resolution and the validate document. Anything but a
``HeatLiteException`` escaping (KeyError, TypeError, RecursionError...) is
a bug: the API would turn it into a 500.
"""

import copy
import datetime
import glob
import os

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heat_lite.common import exception
from heat_lite.engine import template
from heat_lite.engine.template import functions, validate, versions
from tests.unit.engine.template import fakes

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")
FUNCTION_NAMES = sorted(versions.ALL_FUNCTIONS)
RESOURCE_NAMES = ["r0", "r1", "r2"]
PARAM_NAMES = ["p0", "p1", "p2"]
CONDITION_NAMES = ["c0", "c1"]
STACK = {"name": "fuzz", "id": "fuzz-id", "project_id": "proj"}
# database=None: no example database is written into the work tree.
FAST = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

names = st.sampled_from(
    RESOURCE_NAMES
    + PARAM_NAMES
    + CONDITION_NAMES
    + ["x", "%x%", "$x", "", "a,b"]
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 70000),
    st.floats(allow_nan=True, allow_infinity=True),
    names,
    st.text(max_size=8),
    st.sampled_from(["sha256", "md5", "http", "80"]),
)
keys = st.one_of(
    names,
    st.sampled_from(
        [
            "template",
            "params",
            "for_each",
            "permutations",
            "expression",
            "data",
            "keys",
            "values",
            "scheme",
            "host",
            "port",
            "query",
            "path",
        ]
    ),
    st.integers(0, 3),
    st.none(),
    st.booleans(),
)


def _call(children):
    return st.builds(
        lambda name, args: {name: args},
        st.sampled_from(FUNCTION_NAMES),
        children,
    )


values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(keys, children, max_size=4),
        _call(children),
    ),
    max_leaves=25,
)

YAQL = [
    "$.data",
    "$.data.a.sum()",
    "$.data.select($ * 2)",
    "len($.data)",
    "$.data.keys()",
    "1 / 0",
    "$.data.a[5]",
    "range(0, 100000)",
]


def _shaped(children):
    """Calls whose arguments have roughly the right shape, so that
    resolution (not only argument checking) gets exercised."""
    lst = st.lists(children, max_size=3)
    dct = st.dictionaries(names, children, max_size=3)
    shapes = {
        "get_param": st.one_of(
            st.sampled_from(PARAM_NAMES),
            st.lists(children, min_size=1, max_size=3),
        ),
        "get_resource": st.sampled_from(RESOURCE_NAMES),
        "get_attr": st.lists(children, max_size=3).map(lambda v: ["r0"] + v),
        "str_replace": st.fixed_dictionaries(
            {"template": children, "params": dct}
        ),
        "list_join": st.lists(children, min_size=1, max_size=3).map(
            lambda v: [","] + v
        ),
        "str_split": st.tuples(children, children, children).map(list),
        "repeat": st.fixed_dictionaries(
            {
                "for_each": st.dictionaries(
                    st.sampled_from(["%x%", "%y%"]), children, max_size=2
                ),
                "template": children,
            },
            optional={"permutations": children},
        ),
        "digest": st.tuples(
            st.sampled_from(["sha256", "md5", "x"]), children
        ).map(list),
        "map_merge": lst,
        "map_replace": st.tuples(
            children,
            st.fixed_dictionaries({}, optional={"keys": dct, "values": dct}),
        ).map(list),
        "yaql": st.fixed_dictionaries(
            {"expression": st.sampled_from(YAQL), "data": children}
        ),
        "if": st.lists(children, min_size=1, max_size=2).map(
            lambda v: ["c0"] + v
        ),
        "contains": st.tuples(children, children).map(list),
        "filter": st.tuples(children, children).map(list),
        "make_url": st.dictionaries(
            st.sampled_from(
                [
                    "scheme",
                    "host",
                    "port",
                    "path",
                    "query",
                    "username",
                    "password",
                    "fragment",
                ]
            ),
            children,
            max_size=4,
        ),
        "list_concat": lst,
        "list_concat_unique": lst,
        "resource_facade": st.sampled_from(
            ["metadata", "deletion_policy", "update_policy"]
        ),
    }
    return st.one_of(
        *[args.map(lambda a, n=name: {n: a}) for name, args in shapes.items()]
    )


shaped_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(names, children, max_size=3),
        _shaped(children),
    ),
    max_leaves=20,
)


@st.composite
def wallaby_templates(draw):
    params = {
        name: {"type": t, "default": d}
        for name, t, d in zip(
            PARAM_NAMES,
            ["string", "json", "comma_delimited_list"],
            ["a,b", {"a": [1, 2]}, "x,y"],
            strict=True,
        )
    }
    resources = {}
    for name in draw(
        st.lists(st.sampled_from(RESOURCE_NAMES), max_size=3, unique=True)
    ):
        resources[name] = {
            "type": "OS::Heat::None",
            "properties": {"p": draw(shaped_values)},
        }
    return {
        "heat_template_version": "2021-04-16",
        "parameters": params,
        "conditions": {"c0": draw(st.booleans()), "c1": True},
        "resources": resources,
        "outputs": {"o": {"value": draw(shaped_values)}},
    }


param_schemas = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "string",
                "number",
                "comma_delimited_list",
                "json",
                "boolean",
                "bogus",
            ]
        )
    },
    optional={
        "default": values,
        "hidden": st.booleans(),
        "immutable": values,
        "tags": values,
        "label": values,
        "constraints": st.lists(
            st.dictionaries(
                st.sampled_from(
                    [
                        "length",
                        "range",
                        "modulo",
                        "allowed_values",
                        "allowed_pattern",
                        "custom_constraint",
                        "description",
                    ]
                ),
                values,
                max_size=2,
            ),
            max_size=2,
        ),
    },
)

resource_snippets = st.fixed_dictionaries(
    {"type": st.one_of(st.just("OS::Heat::None"), values)},
    optional={
        "properties": values,
        "metadata": values,
        "depends_on": values,
        "condition": values,
        "deletion_policy": values,
        "update_policy": values,
        "external_id": values,
        "description": values,
    },
)

versions_st = st.sampled_from(
    versions.VERSIONS
    + sorted(versions.ALIASES)
    + [datetime.date(2016, 10, 14), "2099-01-01", 12]
)


@st.composite
def templates(draw):
    tmpl = {"heat_template_version": draw(versions_st)}
    if draw(st.booleans()):
        tmpl["parameters"] = draw(
            st.dictionaries(
                st.sampled_from(PARAM_NAMES), param_schemas, max_size=3
            )
        )
    tmpl["resources"] = draw(
        st.dictionaries(
            st.sampled_from(RESOURCE_NAMES), resource_snippets, max_size=3
        )
    )
    if draw(st.booleans()):
        tmpl["conditions"] = draw(
            st.dictionaries(
                st.sampled_from(CONDITION_NAMES), values, max_size=2
            )
        )
    if draw(st.booleans()):
        tmpl["outputs"] = draw(
            st.dictionaries(
                names,
                st.fixed_dictionaries(
                    {"value": values}, optional={"condition": values}
                ),
                max_size=2,
            )
        )
    return tmpl


environments = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "parameters": st.dictionaries(
                st.sampled_from(PARAM_NAMES), values, max_size=3
            ),
            "parameter_defaults": st.dictionaries(
                st.sampled_from(PARAM_NAMES), values, max_size=3
            ),
        },
    ),
    values,
)
attributes = st.dictionaries(
    st.sampled_from(RESOURCE_NAMES),
    st.dictionaries(names, values, max_size=3),
    max_size=3,
)


def exercise(tmpl, env=None, files=None, attrs=None):
    """Parse, bind, resolve and describe; typed errors are fine."""
    try:
        parsed = template.parse(tmpl, files)
        validate.document(parsed, env)
    except exception.HeatLiteException:
        pass
    try:
        parsed = template.parse(tmpl, files)
        bound = parsed.bind(env, STACK)
        bound.parameters_display()
        bound.environment_display()
        bound.dependency_graph().topological_order()
    except exception.HeatLiteException:
        return
    scope = fakes.FakeScope(bound, attributes=attrs)
    for defn in bound.resources.values():
        for resolve in (defn.resolve_properties, defn.resolve_metadata):
            try:
                resolve(scope)
            except exception.HeatLiteException:
                pass
    for output in bound.outputs.values():
        try:
            functions.resolve(output.value, scope)
        except exception.HeatLiteException:
            pass


@settings(FAST, max_examples=80)
@given(wallaby_templates(), attributes)
def test_well_shaped_calls_raise_only_typed_errors(tmpl, attrs):
    exercise(tmpl, None, files={"f": "content"}, attrs=attrs)


@FAST
@given(templates(), environments, attributes)
def test_random_templates_raise_only_typed_errors(tmpl, env, attrs):
    exercise(tmpl, env, files={"f": "content"}, attrs=attrs)


def _corpus_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.yaml"))):
        with open(path) as f:
            case = yaml.safe_load(f)
        if "expect" in case:
            cases.append(case)
    return cases


CASES = _corpus_cases()


def _slots(value, found):
    """Every (container, key) place in a document."""
    if isinstance(value, dict):
        for key in list(value):
            found.append((value, key))
            _slots(value[key], found)
    elif isinstance(value, list):
        for index in range(len(value)):
            found.append((value, index))
            _slots(value[index], found)
    return found


@FAST
@given(st.data())
def test_mutated_corpus_raises_only_typed_errors(data):
    case = copy.deepcopy(data.draw(st.sampled_from(CASES)))
    tmpl = case["template"]
    for _ in range(data.draw(st.integers(1, 3))):
        slots = _slots(tmpl, [])
        if not slots:
            break
        container, key = data.draw(st.sampled_from(slots))
        action = data.draw(st.sampled_from(["replace", "delete", "wrap"]))
        if action == "delete" and isinstance(container, dict):
            del container[key]
        elif action == "wrap":
            container[key] = {
                data.draw(st.sampled_from(FUNCTION_NAMES)): container[key]
            }
        else:
            container[key] = data.draw(values)
    env = case.get("environment")
    if data.draw(st.booleans()):
        declared = tmpl.get("parameters")
        if not isinstance(declared, dict) or not declared:
            declared = PARAM_NAMES
        env = {
            "parameters": data.draw(
                st.dictionaries(
                    st.sampled_from(sorted(declared, key=str)),
                    values,
                    max_size=3,
                )
            )
        }
    exercise(
        tmpl,
        env,
        case.get("files"),
        (case.get("scope") or {}).get("attributes"),
    )


@FAST
@given(
    st.sampled_from(
        ["string", "number", "comma_delimited_list", "json", "boolean"]
    ),
    values,
)
def test_random_parameter_values(param_type, value):
    tmpl = {
        "heat_template_version": "2018-08-31",
        "parameters": {"p": {"type": param_type}},
        "outputs": {"o": {"value": {"get_param": ["p", 0]}}},
    }
    exercise(tmpl, {"parameters": {"p": value}})


def _nested(depth, leaf, wrap):
    value = leaf
    for _ in range(depth):
        value = wrap(value)
    return value


def test_deep_nesting_is_bounded():
    for depth in (150, 5000):
        for wrap in (
            lambda v: [v],
            lambda v: {"k": v},
            lambda v: {"list_join": [",", v]},
        ):
            tmpl = {
                "heat_template_version": "2018-08-31",
                "resources": {
                    "r": {
                        "type": "OS::Heat::None",
                        "properties": {"p": _nested(depth, "x", wrap)},
                    }
                },
            }
            try:
                template.parse(tmpl)
            except exception.StackValidationFailed as exc:
                assert "resources" in str(exc) or "deeper" in str(exc)
            else:
                raise AssertionError("depth %d accepted" % depth)


def test_deep_parameter_values_are_bounded():
    tmpl = {
        "heat_template_version": "2018-08-31",
        "parameters": {"j": {"type": "json"}},
    }
    deep = "[" * 100000 + "]" * 100000
    for value in (deep, _nested(5000, 1, lambda v: [v])):
        try:
            template.parse(tmpl).bind({"parameters": {"j": value}}, STACK)
        except exception.StackValidationFailed:
            pass
        else:
            raise AssertionError("deep value accepted")


def test_self_referencing_yaml_is_bounded():
    env_text = "parameters: &a {p: [*a]}\n"
    try:
        template.parse(
            {
                "heat_template_version": "2018-08-31",
                "parameters": {"p": {"type": "json"}},
            }
        ).bind(env_text, STACK)
    except exception.StackValidationFailed:
        pass
    else:
        raise AssertionError("recursive environment accepted")
