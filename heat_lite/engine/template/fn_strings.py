"""String functions: str_replace (and its strict forms), list_join,
str_split, digest and make_url.

Their behaviour changed in 2015-10-15 (non-string values are serialised as
JSON instead of rejected, list_join takes several lists); the functions
check ``self.version`` for that rather than existing in two copies.
"""

import collections.abc
import hashlib
from urllib import parse as urlparse

from heat_lite.engine.template import base

_JSON_VALUES = "2015-10-15"


class Replace(base.Function):
    """A function for performing string substitutions.

    Longer placeholders are replaced first (ties: lexicographic order) and
    a replacement is never scanned again for other placeholders.
    """

    names = ("str_replace", "str_replace_strict", "str_replace_vstrict")

    def validate(self, ctx):
        if not isinstance(self.args, collections.abc.Mapping):
            self.fail('Arguments to "%s" must be a map' % self.name)
        if "params" not in self.args or "template" not in self.args:
            self.fail(
                '"%s" syntax should be %s:\n  template: This is var1 '
                "template var2\n  params:\n    var1: a\n    var2: "
                "string" % (self.name, self.name)
            )
        if not isinstance(
            self.args["params"], (collections.abc.Mapping, base.Function)
        ):
            self.fail('"%s" parameters must be a mapping' % self.name)

    @property
    def strict(self):
        return self.name != "str_replace"

    def _text(self, value, key):
        """The text a parameter value is replaced with."""
        vstrict = self.name == "str_replace_vstrict"
        if vstrict and (
            value is None
            or value == ""
            or (isinstance(value, (list, dict)) and not value)
        ):
            self.fail(
                "%s has an undefined or empty value for param %s, "
                "must be a defined non-empty value" % (self.name, key)
            )
        if value is None:
            return ""
        if isinstance(value, (str, int, float, bool)):
            return str(value)
        if self.version >= _JSON_VALUES and isinstance(
            value, (collections.abc.Mapping, list)
        ):
            return base.to_json(value, self)
        if self.version >= _JSON_VALUES:
            self.fail(
                '"%s" params must be strings, numbers, list or map.'
                % self.name
            )
        self.fail(
            '"%s" params must be strings or numbers, param %s is not '
            "valid" % (self.name, key)
        )

    def result(self, scope):
        args = self.resolve_args(scope)
        template, params = args.get("template"), args.get("params")
        if not isinstance(template, str):
            self.fail('"%s" template must be a string' % self.name)
        if not isinstance(params, collections.abc.Mapping):
            self.fail('"%s" params must be a map' % self.name)
        for key in params:
            if not isinstance(key, str):
                self.fail(
                    '"%s" param placeholders must be strings' % self.name
                )
        keys = sorted(sorted(params), key=len, reverse=True)
        pairs = [(k, self._text(params[k], k)) for k in keys]
        text, unused = substitute(template, pairs)
        if self.strict and unused:
            self.fail(
                "The following params were not found in the "
                "template: %s"
                % ",".join(sorted(sorted(unused), key=len, reverse=True))
            )
        return text


def substitute(template, pairs):
    """Replace each (key, value) in order; never rescan replaced text.

    The template is kept as pieces, each either still template text or an
    already substituted value; a later key only splits template text.
    Iterative, so thousands of parameters cannot exhaust the stack.

    :returns: (text, keys that did not occur).
    """
    pieces = [(template, True)]
    unused = []
    for key, value in pairs:
        found = False
        result = []
        for text, literal in pieces:
            if not literal or not key:
                result.append((text, literal))
                continue
            parts = text.split(key)
            found = found or len(parts) > 1
            for n, part in enumerate(parts):
                if n:
                    result.append((value, False))
                result.append((part, True))
        pieces = result
        if not found:
            unused.append(key)
    return "".join(text for text, _literal in pieces), unused


class Join(base.Function):
    """A function for joining strings.

    ``list_join: [delimiter, list]``; from 2015-10-15 several lists, and
    maps or lists among the items are serialised as JSON.
    """

    names = ("list_join",)

    @property
    def multiple(self):
        return self.version >= _JSON_VALUES

    def _usage(self):
        more = " ..." if self.multiple else ""
        return (
            'Incorrect arguments to "list_join" should be: "list_join" '
            ': [ " ", [ "str1", "str2"]%s]' % more
        )

    def validate(self, ctx):
        if not isinstance(self.args, list):
            self.fail(self._usage())
        if len(self.args) < 2 or (not self.multiple and len(self.args) > 2):
            self.fail(self._usage())

    def _item(self, item):
        if item is None:
            return ""
        if isinstance(item, str):
            return item
        if self.multiple and isinstance(item, (collections.abc.Mapping, list)):
            return base.to_json(item, self)
        if self.multiple:
            self.fail(
                "Items to join must be string, map or list not %s"
                % base.short(item)
            )
        self.fail("Items to join must be strings not %s" % base.short(item))

    def result(self, scope):
        args = self.resolve_args(scope)
        if not args:
            self.fail(self._usage())
        delim, lists = args[0], args[1:]
        strings = []
        for lst in lists:
            if lst is None or (self.multiple and not lst):
                continue
            if not base.is_list(lst):
                self.fail('"list_join" must operate on a list')
            strings.extend(lst)
        if not isinstance(delim, str):
            self.fail('"list_join" delimiter must be a string')
        return delim.join(self._item(s) for s in strings)


class StrSplit(base.Function):
    """A function for splitting delimited strings into a list.

    ``str_split: [delimiter, string, index]``; with an index, one item of
    the list is returned.
    """

    names = ("str_split",)
    USAGE = (
        'Incorrect arguments to "str_split" should be: "str_split" : '
        '[ ",", "apples,pears", <index>]'
    )

    def validate(self, ctx):
        if not isinstance(self.args, (list, base.Function)):
            self.fail(self.USAGE)

    def result(self, scope):
        args = self.resolve_args(scope)
        if not isinstance(args, list) or len(args) < 2 or len(args) > 3:
            self.fail(self.USAGE)
        delim, text = args[0], args[1]
        if text is None:
            return None
        if (
            not isinstance(delim, str)
            or not delim
            or not isinstance(text, str)
        ):
            self.fail(self.USAGE)
        items = text.split(delim)
        if len(args) == 2:
            return items
        try:
            index = int(args[2])
        except (TypeError, ValueError):
            self.fail(
                'Incorrect index to "str_split" should be: "str_split"'
                ' : [ ",", "apples,pears", <index>]'
            )
        try:
            return items[index]
        except IndexError:
            self.fail(
                'Incorrect index to "str_split" should be between 0 '
                "and %d" % (len(items) - 1)
            )


def _algorithms():
    # shake_* need a length and so cannot make a plain hexdigest.
    return sorted(
        a.lower()
        for a in hashlib.algorithms_available
        if not a.lower().startswith("shake")
    )


class Digest(base.Function):
    """A function for performing digest operations.

    ``digest: [algorithm, value]`` with any hashlib algorithm.
    """

    names = ("digest",)

    def validate(self, ctx):
        if not base.contains_function(self.args):
            self._check(self.args)

    def _check(self, args):
        if not (
            isinstance(args, list) and all(isinstance(a, str) for a in args)
        ):
            self.fail(
                'Argument to function "digest" must be a list of strings'
            )
        if len(args) != 2:
            self.fail('Function "digest" usage: ["<algorithm>", "<value>"]')
        if args[0].lower() not in _algorithms():
            self.fail("Algorithm must be one of %s" % ", ".join(_algorithms()))

    def result(self, scope):
        args = self.resolve_args(scope)
        self._check(args)
        try:
            hasher = hashlib.new(args[0].lower())
        except ValueError as exc:
            self.fail("Algorithm %s is not usable here: %s" % (args[0], exc))
        hasher.update(args[1].encode("utf-8"))
        return hasher.hexdigest()


class MakeURL(base.Function):
    """A function for building a correctly escaped URL from its parts."""

    names = ("make_url",)
    KEYS = (
        "scheme",
        "username",
        "password",
        "host",
        "port",
        "path",
        "query",
        "fragment",
    )

    def validate(self, ctx):
        if not isinstance(self.args, collections.abc.Mapping):
            self.fail('The arguments to "make_url" must be a map')
        invalid = [str(k) for k in self.args if k not in self.KEYS]
        if invalid:
            self.fail(
                'Invalid arguments to "make_url": %s'
                % ", ".join(sorted(invalid))
            )
        self._check(self.args)

    def _check(self, args):
        for key, value in args.items():
            if isinstance(value, base.Function):
                continue
            if key == "query":
                if not isinstance(value, collections.abc.Mapping):
                    self.fail(
                        'The "query" argument to "make_url" must be a map'
                    )
            elif key == "port":
                self._port(value, args)
            elif not isinstance(value, str):
                self.fail(
                    'The "%s" argument to "make_url" must be a string' % key
                )

    def _port(self, port, args):
        if isinstance(port, bool) or not isinstance(port, (int, str)):
            self.fail(
                'Invalid URL port "%s" for make_url called with %s'
                % (port, base.short(args))
            )
        try:
            number = int(port)
        except ValueError:
            self.fail(
                'Invalid URL port "%s" for make_url called with %s'
                % (port, base.short(args))
            )
        if not 0 < number <= 65535:
            self.fail("Invalid URL port %d, must be in range 1-65535" % number)
        return number

    def _netloc(self, args):
        user = urlparse.quote(args.get("username", ""), safe="")
        password = urlparse.quote(args.get("password", ""), safe="")
        netloc = ""
        if user or password:
            netloc = user + (":" + password if password else "") + "@"
        host = args.get("host", "")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        host = urlparse.quote(host, safe=":")
        netloc += "[%s]" % host if ":" in host else host
        if args.get("port"):
            netloc += ":%d" % self._port(args["port"], args)
        return netloc

    def result(self, scope):
        args = self.resolve_args(scope)
        self._check(args)
        scheme = args.get("scheme", "")
        if ":" in scheme:
            self.fail("URL \"scheme\" should not contain ':'")
        try:
            query = urlparse.urlencode(args.get("query", {})).replace(
                "%2F", "/"
            )
        except (TypeError, ValueError) as exc:
            self.fail(
                'The "query" argument to "make_url" cannot be '
                "encoded: %s" % exc
            )
        return urlparse.urlunsplit(
            (
                scheme,
                self._netloc(args),
                urlparse.quote(args.get("path", "")),
                query,
                urlparse.quote(args.get("fragment", "")),
            )
        )


FUNCTIONS = (Replace, Join, StrSplit, Digest, MakeURL)
