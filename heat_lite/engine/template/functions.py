"""HOT intrinsic functions, parsed once and resolved many times.

``parse(snippet, version, path)`` turns a template snippet into a tree in
which every ``{fn_name: args}`` single-key mapping of a function allowed by
the version becomes a ``Function``. A parsed tree can list the resources it
refers to (``dependencies``) and be resolved against a ``Scope``.
"""

import collections.abc
import json

from heat_lite.common import exception


class Scope:
    """What functions can see while resolving. Subclassed by the engine.

    Methods raise typed errors; the defaults make a scope with nothing in
    it, useful for validation.
    """

    def param(self, name):
        raise exception.UserParameterMissing(key=name)

    def reference_id(self, resource_name):
        return resource_name

    def attribute(self, resource_name, attribute, path):
        return None

    def file(self, key):
        raise exception.NotFound(
            message="Could not fetch remote template '%s'" % key)


class Function:
    """A parsed function call: ``name`` with already-parsed ``args``."""

    name = None

    def __init__(self, args, path):
        self.args = args
        self.path = path
        self.validate()

    def validate(self):
        """Check the shape of ``args``; raise StackValidationFailed."""

    def dependencies(self):
        """Names of the resources this call refers to."""
        return set(dependencies(self.args))

    def result(self, scope):
        raise NotImplementedError

    def _fail(self, msg):
        raise exception.StackValidationFailed(path=self.path, msg=msg)


class GetParam(Function):
    name = "get_param"

    def validate(self):
        if not isinstance(self.args, (str, list, Function)) or (
                isinstance(self.args, list) and not self.args):
            self._fail("Arguments to \"get_param\" must be a parameter "
                       "name or a list of [name, key/index, ...]")

    def result(self, scope):
        args = resolve(self.args, scope)
        if isinstance(args, str):
            return scope.param(args)
        value = scope.param(args[0])
        for key in args[1:]:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                return None
        return value


class GetResource(Function):
    name = "get_resource"

    def validate(self):
        if not isinstance(self.args, str):
            self._fail('Argument to "get_resource" must be a string')

    def dependencies(self):
        return {self.args}

    def result(self, scope):
        return scope.reference_id(self.args)


class GetAttr(Function):
    name = "get_attr"

    def validate(self):
        if (not isinstance(self.args, list) or len(self.args) < 2
                or not isinstance(self.args[0], str)):
            self._fail('Arguments to "get_attr" must be a list of the form '
                       '[resource_name, attribute, (path), ...]')

    def dependencies(self):
        return {self.args[0]} | set(dependencies(self.args[1:]))

    def result(self, scope):
        attr_and_path = resolve(self.args[1:], scope)
        return scope.attribute(self.args[0], attr_and_path[0],
                               attr_and_path[1:])


class GetFile(Function):
    name = "get_file"

    def validate(self):
        if not isinstance(self.args, str):
            self._fail('Argument to "get_file" must be a string')

    def result(self, scope):
        return scope.file(self.args)


class ListJoin(Function):
    name = "list_join"

    def validate(self):
        if not isinstance(self.args, list) or len(self.args) < 2:
            self._fail('Incorrect arguments to "list_join" should be: '
                       '"list_join" : [ " ", [ "str1", "str2"] ]')

    def result(self, scope):
        args = resolve(self.args, scope)
        delim, lists = args[0], args[1:]
        items = []
        for lst in lists:
            if lst is None:
                continue
            if not isinstance(lst, list):
                self._fail('Incorrect arguments to "list_join" should be: '
                           '"list_join" : [ " ", [ "str1", "str2"] ]')
            items.extend(lst)
        return delim.join(_to_text(i) for i in items)


class StrReplace(Function):
    name = "str_replace"

    def validate(self):
        if (not isinstance(self.args, collections.abc.Mapping)
                or set(self.args) != {"template", "params"}):
            self._fail('"str_replace" syntax should be str_replace:\\n  '
                       'template: <string>\\n  params: <mapping>')

    def result(self, scope):
        args = resolve(self.args, scope)
        text, params = args["template"], args["params"]
        if not isinstance(params, collections.abc.Mapping):
            self._fail('"str_replace" parameters must be a mapping')
        for key in sorted(params, key=lambda k: (-len(k), k)):
            value = params[key]
            text = text.replace(key, _to_text(value if value is not None
                                              else ""))
        return text


def _to_text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


FUNCTION_CLASSES = {cls.name: cls for cls in (
    GetParam, GetResource, GetAttr, GetFile, ListJoin, StrReplace)}


def parse(snippet, allowed, path=""):
    """Parse ``snippet``, turning calls of ``allowed`` functions to objects.

    :raises StackValidationFailed: for a malformed function call, or a
        function the version does not know.
    """
    if isinstance(snippet, collections.abc.Mapping):
        if len(snippet) == 1:
            (key, args), = snippet.items()
            cls = FUNCTION_CLASSES.get(key)
            if cls is not None and key in allowed:
                return cls(parse(args, allowed, "%s.%s" % (path, key)),
                           path)
            if key in FUNCTION_CLASSES:
                raise exception.StackValidationFailed(
                    path=path, msg='"%s" is not supported by this template '
                    'version' % key)
        return {k: parse(v, allowed, "%s.%s" % (path, k) if path else k)
                for k, v in snippet.items()}
    if isinstance(snippet, list):
        return [parse(v, allowed, "%s[%d]" % (path, i))
                for i, v in enumerate(snippet)]
    return snippet


def dependencies(parsed):
    """Yield the resource names referred to anywhere in ``parsed``."""
    if isinstance(parsed, Function):
        yield from parsed.dependencies()
    elif isinstance(parsed, collections.abc.Mapping):
        for v in parsed.values():
            yield from dependencies(v)
    elif isinstance(parsed, list):
        for v in parsed:
            yield from dependencies(v)


def resolve(parsed, scope):
    """Return ``parsed`` with every function replaced by its result."""
    if isinstance(parsed, Function):
        return parsed.result(scope)
    if isinstance(parsed, collections.abc.Mapping):
        return {k: resolve(v, scope) for k, v in parsed.items()}
    if isinstance(parsed, list):
        return [resolve(v, scope) for v in parsed]
    return parsed
