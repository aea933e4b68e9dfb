"""A scope that plays the world for resolution tests: no mocks needed."""

from heat_lite.engine.template import functions


class FakeScope(functions.Scope):
    """Resolve against a bound template and a few canned facts.

    :param refs: {resource name: physical id} for ``get_resource``.
    :param attributes: {resource name: {attribute: value}}.
    :param facade: {kind: value} for ``resource_facade``.
    """

    def __init__(self, bound, refs=None, attributes=None, facade=None):
        self.bound = bound
        self.refs = refs or {}
        self.attributes = attributes or {}
        self.facades = facade or {}

    def param(self, name):
        return self.bound.param(name)

    def file(self, key):
        return self.bound.file(key)

    def condition(self, name):
        return self.bound.condition(name)

    def reference_id(self, resource_name):
        return self.refs.get(resource_name, resource_name)

    def attribute(self, resource_name, attribute, path):
        attrs = self.attributes.get(resource_name)
        if attrs is None:
            return None
        if attribute is None:
            return dict(attrs)
        value = attrs.get(attribute)
        for key in path:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                return None
        return value

    def facade(self, kind):
        return self.facades.get(kind)
