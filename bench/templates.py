"""HOT templates of the benchmark stacks.

Flat stacks have N independent resources, so the engine may run them all
at once; chain stacks make each resource depend on the previous one, so
every step waits for the one before and per-step latency dominates. Both
use ``OS::Heat::None``, which does no cloud work: every second measured is
the engine's own cost.
"""

NONE = "OS::Heat::None"
TEST = "OS::Heat::TestResource"
VERSION = "2018-08-31"
SHAPES = ("flat", "chain")


def _names(start, count):
    return ["r%d" % i for i in range(start, start + count)]


def build(shape, names, rtype=NONE, props=None):
    """A template of ``names`` in order; chained if ``shape`` is chain.

    :param props: a callable name -> properties dict, or None.
    """
    resources = {}
    previous = None
    for name in names:
        res = {"type": rtype}
        if props is not None:
            res["properties"] = props(name)
        if shape == "chain" and previous is not None:
            res["depends_on"] = previous
        resources[name] = res
        previous = name
    return {"heat_template_version": VERSION, "resources": resources}


def none_stack(shape, n, value=1):
    """N OS::Heat::None resources whose property ``v`` is ``value``;
    changing ``value`` updates every resource in place."""
    return build(shape, _names(0, n), props=lambda name: {"v": value})


def half_replaced(shape, n, value=1):
    """The ``none_stack`` with its first half removed and as many new
    resources added after the rest (chain: the new ones continue the
    chain from the last kept resource)."""
    removed = n // 2
    names = _names(removed, n - removed) + _names(n, removed)
    return build(shape, names, props=lambda name: {"v": value})


def test_stack(shape, n, replace_value="a"):
    """N OS::Heat::TestResource; a new ``replace_value`` replaces each.

    ``OS::Heat::None`` accepts any property change in place and is only
    replaced on a type change, so the replacement scenario uses Heat's
    test resource and its ``update_replace_value`` property instead.
    """
    return build(
        shape,
        _names(0, n),
        rtype=TEST,
        props=lambda name: {
            "value": "x",
            "update_replace_value": replace_value,
        },
    )


def resource_group(count):
    """An OS::Heat::ResourceGroup of ``count`` OS::Heat::None."""
    return {
        "heat_template_version": VERSION,
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": count, "resource_def": {"type": NONE}},
            }
        },
    }
