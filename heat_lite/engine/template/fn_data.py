"""Functions that read the world: parameters, resources, files, facade.

These are the functions that make a template depend on something outside
the snippet: ``get_resource`` and ``get_attr`` create the edges of the
dependency graph, ``get_param`` and ``get_file`` are checked against the
declared parameters and the ``files`` map while parsing.
"""

import collections.abc

from heat_lite.common import exception
from heat_lite.engine.template import base

PSEUDO_PARAMETERS = ("OS::stack_name", "OS::stack_id", "OS::project_id")


def _select_path(value, path, on_error):
    """Index into dicts/lists along ``path``; ``on_error`` when it fails.

    A string key indexes a list when it is a number, as Heat allows.
    """
    for key in path:
        if isinstance(value, str) or not isinstance(
            value, (collections.abc.Mapping, collections.abc.Sequence)
        ):
            return on_error
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            return on_error
        if isinstance(value, collections.abc.Sequence) and isinstance(
            key, str
        ):
            try:
                key = int(key)
            except ValueError:
                return on_error
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return on_error
    return value


def _missing_message(path, name):
    """Heat's words for a ``get_param`` of an undeclared parameter: in a
    resource's properties they are a property error, with Heat's empty
    fields between the colons (``Property error: : <path>: : ...``),
    which clients and Heat's own tests match on."""
    message = "The Parameter (%s) was not provided." % name
    if ".properties" in str(path) and str(path).startswith("resources."):
        return "Property error: : %s: : %s" % (path, message)
    return "%s: %s" % (path, message)


class GetParam(base.Function):
    """A function for resolving parameter references.

    ``get_param: name`` or ``get_param: [name, key_or_index, ...]``.
    """

    names = ("get_param",)

    def validate(self, ctx):
        args = self.args
        if isinstance(args, base.Function):
            return
        if args is None or args == "" or args == []:
            self.fail('Function "get_param" must have arguments')
        if not isinstance(args, (str, list)):
            self.fail('Argument to "get_param" must be string or list')
        name = args if isinstance(args, str) else args[0]
        if isinstance(name, base.Function):
            return
        if not isinstance(name, str):
            self.fail('Parameter name in "get_param" must be string')
        known = ctx.param_names
        if (
            known is not None
            and not ctx.unchecked_params
            and name not in known
            and name not in PSEUDO_PARAMETERS
        ):
            raise exception.UserParameterMissing(
                message=_missing_message(self.path, name),
                key=name,
                path=self.path,
            )

    def result(self, scope):
        args = self.resolve_args(scope)
        if isinstance(args, str):
            name, path = args, []
        elif isinstance(args, list) and args:
            name, path = args[0], args[1:]
        else:
            self.fail('Argument to "get_param" must be string or list')
        if not isinstance(name, str):
            self.fail('Parameter name in "get_param" must be string')
        return _select_path(scope.param(name), path, "")


class GetResource(base.Function):
    """A function for resolving resource references."""

    names = ("get_resource",)

    def validate(self, ctx):
        if not isinstance(self.args, str):
            self.fail(
                'Argument to "get_resource" must be a resource name (a string)'
            )

    def references(self):
        yield self.args, self.path

    def result(self, scope):
        return scope.reference_id(self.args)


class GetAttr(base.Function):
    """A function for resolving resource attributes.

    ``get_attr: [resource_name, attribute, path...]``; from 2015-10-15
    ``get_attr: [resource_name]`` returns a map of all the attributes.
    """

    names = ("get_attr",)

    def validate(self, ctx):
        args = self.args
        if not isinstance(args, list):
            self.fail('Argument to "get_attr" must be a list')
        all_attrs = self.version >= "2015-10-15"
        if all_attrs and not args:
            self.fail(
                'Arguments to "get_attr" can be of the next forms: '
                "[resource_name] or [resource_name, attribute, "
                "(path), ...]"
            )
        if not all_attrs and len(args) < 2:
            self.fail(
                'Arguments to "get_attr" must be of the form '
                "[resource_name, attribute, (path), ...]"
            )
        if not isinstance(args[0], str):
            self.fail('The resource name in "get_attr" must be a string')

    def references(self):
        yield self.args[0], self.path
        yield from base.references(self.args[1:])

    def result(self, scope):
        name = self.args[0]
        if len(self.args) == 1:
            return scope.attribute(name, None, ())
        attr = base.resolve(self.args[1], scope)
        if not isinstance(attr, str):
            self.fail(
                'The attribute name in "get_attr" must be a string, '
                "not %s" % base.short(attr)
            )
        path = tuple(base.resolve(self.args[2:], scope))
        if self.version >= "2014-10-16":
            return scope.attribute(name, attr, path)
        # 2013-05-23: fetch the whole attribute, then select the path.
        return _select_path(scope.attribute(name, attr, ()), path, None)


class GetFile(base.Function):
    """A function for including a file inline."""

    names = ("get_file",)

    def validate(self, ctx):
        if isinstance(self.args, base.Function):
            return
        if not isinstance(self.args, str):
            self.fail('Argument to "get_file" must be a string')
        if ctx.files is not None and self.args not in ctx.files:
            self.fail(
                'No content found in the "files" section for '
                "get_file path: %s" % self.args
            )

    def result(self, scope):
        key = self.resolve_args(scope)
        if not isinstance(key, str):
            self.fail('Argument to "get_file" must be a string')
        try:
            return scope.file(key)
        except exception.StackValidationFailed as exc:
            raise exception.StackValidationFailed(
                path=self.path, msg=exc.kwargs.get("msg", str(exc))
            ) from None


class ResourceFacade(base.Function):
    """A function for retrieving data in a parent provider template."""

    names = ("resource_facade",)
    KINDS = ("metadata", "deletion_policy", "update_policy")

    def validate(self, ctx):
        if self.args not in self.KINDS:
            self.fail(
                'Incorrect arguments to "resource_facade" should be '
                "one of: %s" % ", ".join(self.KINDS)
            )

    def result(self, scope):
        return scope.facade(self.args)


FUNCTIONS = (GetParam, GetResource, GetAttr, GetFile, ResourceFacade)
