"""HOT intrinsic functions, parsed once and resolved many times.

``parse(snippet, version, path)`` turns a template snippet into a tree in
which every ``{fn_name: args}`` single-key mapping of a function allowed by
the version becomes a ``Function``. A parsed tree can list the resources it
refers to (``dependencies``) and be resolved against a ``Scope``.

The rules of which names are functions where live in ``ParseContext``:
each version has its set of functions, ``conditions`` (and the condition
argument of ``if``, and the ``condition`` of resources and outputs) have a
smaller set of their own, and a name that is a function in another
version, or in the other context, is an error rather than silently data.
"""

from heat_lite.common import exception
from heat_lite.engine.template import (
    base,
    fn_cfn,
    fn_conditions,
    fn_data,
    fn_lists,
    fn_strings,
    fn_yaql,
    versions,
)

Scope = base.Scope
Function = base.Function
REMOVED = base.REMOVED
resolve = base.resolve
references = base.references
dependencies = base.dependencies
MAX_DEPTH = base.MAX_DEPTH

CLASSES = {
    name: cls
    for module in (
        fn_data,
        fn_strings,
        fn_lists,
        fn_yaql,
        fn_conditions,
        fn_cfn,
    )
    for cls in module.FUNCTIONS
    for name in cls.names
}
FUNCTION_CLASSES = CLASSES  # the name of the first version of this module


def describe(name):
    """First line of the docstring of the function ``name``."""
    doc = (CLASSES[name].__doc__ or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


class ParseContext:
    """What parsing a snippet needs to know about the template around it.

    :param version: canonical HOT version.
    :param param_names: declared parameter names; None skips the check of
        ``get_param`` names.
    :param files: the ``files`` map; None skips the check of ``get_file``.
    :param condition_names: names of the ``conditions`` section; None skips
        the check of condition names.
    :param conditions: {name: bool} once the template is bound; ``if`` is
        then decided while parsing.
    :param condition_scope: Scope used to evaluate condition expressions
        while parsing a bound template.
    :param unchecked_params: do not refuse a ``get_param`` of an
        undeclared name (``outputs``: as in Heat, such an output is
        reported with an ``output_error`` when it is resolved, and the
        stack is not refused).
    """

    def __init__(
        self,
        version,
        param_names=None,
        files=None,
        condition_names=None,
        conditions=None,
        condition_scope=None,
        in_condition=False,
        unchecked_params=False,
    ):
        self.version = version
        self.unchecked_params = unchecked_params
        self._outputs_ctx = None
        self.param_names = param_names
        self.files = files
        self.condition_names = condition_names
        self.conditions = conditions
        self.condition_scope = condition_scope
        self.in_condition = in_condition
        if in_condition:
            self.allowed = versions.CONDITION_FUNCTIONS[version]
            self.others = versions.FUNCTIONS[version]
        else:
            self.allowed = versions.FUNCTIONS[version]
            self.others = versions.CONDITION_FUNCTIONS[version]
        self._condition_ctx = self if in_condition else None

    def condition_context(self):
        """The context for a condition expression inside this one."""
        if self._condition_ctx is None:
            self._condition_ctx = ParseContext(
                self.version,
                self.param_names,
                self.files,
                self.condition_names,
                self.conditions,
                self.condition_scope,
                in_condition=True,
            )
        return self._condition_ctx

    def outputs_context(self):
        """The context for the values of ``outputs``."""
        if self._outputs_ctx is None:
            self._outputs_ctx = ParseContext(
                self.version,
                self.param_names,
                self.files,
                self.condition_names,
                self.conditions,
                self.condition_scope,
                unchecked_params=True,
            )
        return self._outputs_ctx

    def evaluate_condition(self, parsed, path):
        """Decide a parsed condition argument of a bound template."""
        value = base.resolve(parsed, self.condition_scope)
        return fn_conditions.truth(value, self.condition_scope, path)

    def function_class(self, key, path):
        """The class of function ``key`` here, None if ``key`` is data.

        :raises StackValidationFailed, InvalidTemplateVersion: for a
            function that exists but not in this version or context.
        """
        if key in self.allowed:
            return CLASSES[key]
        if key in self.others:
            if self.in_condition:
                msg = 'The function "%s" is invalid in this context' % key
            else:
                msg = (
                    'The function "%s" is only valid in a condition '
                    "(the conditions section, a condition key or the "
                    'first argument of "if")' % key
                )
            raise exception.StackValidationFailed(path=path, msg=msg)
        if key in versions.REMOVED[self.version]:
            raise exception.InvalidTemplateVersion(
                explanation="%s: The function %s is not supported in this "
                "version of HOT (%s)." % (path, key, self.version),
                path=path,
            )
        if key in versions.ALL_FUNCTIONS:
            raise exception.StackValidationFailed(
                path=path,
                msg='The function "%s" is not supported in '
                "heat_template_version %s (it was added in %s)"
                % (key, self.version, versions.ADDED_IN[key]),
            )
        return None

    def parse(self, snippet, path, depth=0):
        """Parse ``snippet`` found at ``path``; may return ``REMOVED``."""
        if depth > base.MAX_DEPTH:
            raise exception.StackValidationFailed(
                path=path,
                msg="Nesting is deeper than %d levels" % base.MAX_DEPTH,
            )
        if isinstance(snippet, dict):
            if len(snippet) == 1:
                ((key, args),) = snippet.items()
                cls = (
                    self.function_class(key, path)
                    if isinstance(key, str)
                    else None
                )
                if cls is not None:
                    return cls.build(self, key, args, path, depth)
            result = {}
            for key, value in snippet.items():
                value = self.parse(value, base.join_path(path, key), depth + 1)
                if value is not base.REMOVED:
                    result[key] = value
            return result
        if isinstance(snippet, (list, tuple)):
            result = []
            for index, value in enumerate(snippet):
                value = self.parse(
                    value, base.join_path(path, index), depth + 1
                )
                if value is not base.REMOVED:
                    result.append(value)
            return result
        return snippet


def _version_of(allowed):
    """Map an old-style set of allowed names to the newest such version."""
    for version in reversed(versions.VERSIONS):
        if versions.FUNCTIONS[version] == frozenset(allowed):
            return version
    return versions.VERSIONS[-1]


def parse(snippet, version, path="", **context):
    """Parse ``snippet``, turning calls of the version's functions to objects.

    :param version: a HOT version (date, alias) or, for compatibility, a
        set of allowed function names.
    :param context: keyword arguments of ``ParseContext``.
    :raises StackValidationFailed: for a malformed function call, or a
        function the version does not know.
    """
    if isinstance(version, str):
        version = versions.normalise(version)
    else:
        version = _version_of(version)
    base.check_depth(snippet, path)
    value = ParseContext(version, **context).parse(snippet, path)
    return None if value is base.REMOVED else value
