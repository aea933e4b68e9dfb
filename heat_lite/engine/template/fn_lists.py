"""Collection functions: repeat, map_merge, map_replace, list_concat(_unique),
filter and yaql.

``repeat`` grew over versions (maps as ``for_each`` values in 2016-10-14,
``permutations`` in 2017-09-01); ``yaql`` runs the expression language of
the ``yaql`` package with Heat's limits on iterations and memory.
"""

import collections.abc
import itertools

from heat_lite.engine.template import base

MAX_REPEAT = 100000  # items one repeat may produce


class Repeat(base.Function):
    """A function for iterating over a list of items.

    ``repeat: {for_each: {placeholder: list}, template: body}``, optionally
    ``permutations: false`` (2017-09-01) to zip the lists instead of
    iterating over every combination.
    """

    names = ("repeat",)

    def validate(self, ctx):
        if not isinstance(self.args, collections.abc.Mapping):
            self.fail('Arguments to "repeat" must be a map')
        if "for_each" not in self.args or "template" not in self.args:
            self.fail(
                '"repeat" syntax should be repeat:\n  template: This '
                "is %var%\n  for_each:\n    %var%: ['a', 'b', "
                "'c']"
            )
        if not isinstance(
            self.args["for_each"], (collections.abc.Mapping, base.Function)
        ):
            self.fail('The "for_each" argument to "repeat" must contain a map')
        if self.version >= "2017-09-01" and not isinstance(
            self.args.get("permutations", True), bool
        ):
            self.fail(
                '"permutations" should be boolean type for repeat function.'
            )

    @property
    def nested(self):
        if self.version < "2017-09-01":
            return True
        return self.args.get("permutations", True)

    def _values(self, value):
        maps_ok = self.version >= "2016-10-14" and self.nested
        if value is None:
            return []
        if isinstance(value, collections.abc.Mapping) and maps_ok:
            return list(value)
        if not base.is_list(value):
            kind = "lists or maps" if maps_ok else "lists"
            self.fail(
                'The values of the "for_each" argument to "repeat" '
                "must be %s" % kind
            )
        for item in value:
            if not isinstance(item, (str, int, float)):
                self.fail(
                    'The values of the "for_each" argument to '
                    '"repeat" must be lists of strings or numbers, '
                    "not %s" % base.short(item)
                )
        return [str(item) for item in value]

    def _combinations(self, lists):
        if self.nested:
            count = 1
            for values in lists:
                count *= len(values)
            if count > MAX_REPEAT:
                self.fail(
                    '"repeat" would produce %d items (at most %d)'
                    % (count, MAX_REPEAT)
                )
            return itertools.product(*lists)
        if len({len(values) for values in lists}) > 1:
            self.fail(
                "For repeat, the length of for_each values should be "
                "equal if no nested loop."
            )
        return zip(*lists, strict=True)

    def result(self, scope):
        for_each = base.resolve(self.args["for_each"], scope)
        if not isinstance(for_each, collections.abc.Mapping):
            self.fail('The "for_each" argument to "repeat" must contain a map')
        keys = list(for_each)
        for key in keys:
            if not isinstance(key, str):
                self.fail(
                    'The keys of the "for_each" argument to "repeat" '
                    "must be strings"
                )
        lists = [self._values(for_each[key]) for key in keys]
        template = base.resolve(self.args["template"], scope)
        base.check_depth(template, self.path)
        return [
            _replace(template, list(zip(keys, combo, strict=True)))
            for combo in self._combinations(lists)
        ]


def _replace(template, pairs):
    """Copy ``template`` replacing each key by its value in strings."""
    if isinstance(template, str):
        for key, value in pairs:
            template = template.replace(key, value)
        return template
    if isinstance(template, collections.abc.Mapping):
        return {
            _replace(k, pairs): _replace(v, pairs) for k, v in template.items()
        }
    if isinstance(template, list):
        return [_replace(item, pairs) for item in template]
    return template


def _as_map(value, fn, msg):
    if value is None:
        return {}
    if not isinstance(value, collections.abc.Mapping):
        fn.fail(msg)
    return value


class MapMerge(base.Function):
    """A function for merging maps (later maps win)."""

    names = ("map_merge",)

    def result(self, scope):
        args = self.resolve_args(scope)
        if not base.is_list(args):
            self.fail(
                'Incorrect arguments to "map_merge" should be: '
                '"map_merge" : [ { "key1": "val1" }, { "key2": '
                '"val2" } ]'
            )
        merged = {}
        for item in args:
            merged.update(
                _as_map(
                    item,
                    self,
                    "Incorrect arguments: Items to merge must be maps.",
                )
            )
        return merged


class MapReplace(base.Function):
    """A function for performing substitutions on maps.

    ``map_replace: [map, {keys: {old: new}, values: {old: new}}]``.
    """

    names = ("map_replace",)
    USAGE = (
        '"map_replace" : [ { "key1": "val1" }, {"keys": {"key1": '
        '"key2"}, "values": {"val1": "val2"}}]'
    )

    def result(self, scope):
        args = self.resolve_args(scope)
        usage = 'Incorrect arguments to "map_replace" should be: ' + self.USAGE
        if not base.is_list(args) or len(args) != 2:
            self.fail(usage)
        maps_msg = (
            'Incorrect arguments: to "map_replace", arguments must '
            "be a list of maps. Example:  " + self.USAGE
        )
        in_map = _as_map(args[0], self, maps_msg)
        spec = _as_map(args[1], self, maps_msg)
        if any(k not in ("keys", "values") for k in spec):
            self.fail(usage)
        keys = _as_map(spec.get("keys"), self, maps_msg)
        values = _as_map(spec.get("values"), self, maps_msg)
        return self._replace(in_map, keys, values)

    def _replace(self, in_map, keys, values):
        result = {}
        for key, value in in_map.items():
            new_key = keys.get(key)
            if new_key is None:
                new_key = key
            elif new_key in in_map and new_key != key:
                self.fail(
                    "key replacement %s collides with a key in the "
                    "input map" % (new_key,)
                )
            elif new_key in result:
                self.fail(
                    "key replacement %s collides with a key in the "
                    "output map" % (new_key,)
                )
            try:
                result[new_key] = values.get(value, value)
            except TypeError:  # an unhashable value is never replaced
                result[new_key] = value
        return result


class ListConcat(base.Function):
    """A function for extending lists.

    ``list_concat_unique`` keeps only the last copy of a repeated item.
    """

    names = ("list_concat", "list_concat_unique")

    def result(self, scope):
        args = self.resolve_args(scope)
        if not base.is_list(args):
            self.fail(
                'Incorrect arguments to "%s" should be: "%s" : [ [ '
                "<value 1>, <value 2> ], [ <value 3>, <value 4> ] ]"
                % (self.name, self.name)
            )
        items = []
        for lst in args:
            if lst is None:
                continue
            if not base.is_list(lst):
                self.fail(
                    "Incorrect arguments: Items to concat must be lists."
                )
            items.extend(lst)
        if self.name == "list_concat_unique":
            items = [
                item
                for n, item in enumerate(items)
                if item not in items[n + 1 :]
            ]
        return items


class Filter(base.Function):
    """A function for filtering out values from lists."""

    names = ("filter",)

    def validate(self, ctx):
        if not isinstance(self.args, list):
            self.fail('Argument to "filter" must be a list')
        if len(self.args) != 2:
            self.fail(
                '"filter" expected 2 arguments of the form [values, '
                "sequence] but got %d arguments instead" % len(self.args)
            )

    def result(self, scope):
        args = self.resolve_args(scope)
        if len(args) != 2:
            self.fail(
                '"filter" expected 2 arguments of the form [values, '
                "sequence] but got %d arguments instead" % len(args)
            )
        values, sequence = args
        if not sequence:
            return sequence
        if not isinstance(sequence, list):
            self.fail('"filter" only works with lists')
        if not values:
            return sequence
        if not isinstance(values, list):
            self.fail('"filter" filters a list of values')
        return [item for item in sequence if item not in values]


FUNCTIONS = (Repeat, MapMerge, MapReplace, ListConcat, Filter)
