"""The CloudFormation functions HOT 2013-05-23 still accepts.

``Ref``, ``Fn::Select``, ``Fn::Join``, ``Fn::Split``, ``Fn::Replace``,
``Fn::Base64``, ``Fn::GetAZs``, ``Fn::MemberListToMap`` and
``Fn::ResourceFacade``. Later versions removed them all (``Fn::Select``
lasted until 2015-10-15); using them there is an InvalidTemplateVersion.
"""

import collections.abc

from heat_lite.engine.template import base, fn_data, fn_strings

AWS_PSEUDO = {
    "AWS::StackName": "OS::stack_name",
    "AWS::StackId": "OS::stack_id",
}
AVAILABILITY_ZONES = ["nova"]


class Ref(base.Function):
    """A function for resolving parameters or resource references."""

    names = ("Ref",)

    def validate(self, ctx):
        if not isinstance(self.args, str):
            self.fail('Argument to "Ref" must be a string')
        known = ctx.param_names or ()
        self.is_param = (
            self.args in known
            or self.args in AWS_PSEUDO
            or self.args in fn_data.PSEUDO_PARAMETERS
        )

    def references(self):
        if not self.is_param:
            yield self.args, self.path

    def result(self, scope):
        if self.is_param:
            return scope.param(AWS_PSEUDO.get(self.args, self.args))
        return scope.reference_id(self.args)


class Select(base.Function):
    """A function for selecting an item from a list or map."""

    names = ("Fn::Select",)
    USAGE = (
        'Arguments to "Fn::Select" must be of the form: [index, collection]'
    )

    def validate(self, ctx):
        if not isinstance(self.args, list) or len(self.args) != 2:
            self.fail(self.USAGE)

    def result(self, scope):
        index, collection = (base.resolve(a, scope) for a in self.args)
        if collection is None:
            return ""
        if isinstance(collection, collections.abc.Mapping):
            if not isinstance(index, str):
                self.fail(
                    'Index to "Fn::Select" must be a string when '
                    "selecting from a map"
                )
            return collection.get(index, "")
        if not base.is_list(collection):
            self.fail(self.USAGE)
        try:
            return collection[int(index)]
        except (TypeError, ValueError):
            self.fail('Index to "Fn::Select" must be an integer')
        except IndexError:
            return ""


class Join(base.Function):
    """A function for joining strings: ``Fn::Join: [delim, [strings]]``."""

    names = ("Fn::Join",)

    def validate(self, ctx):
        if not isinstance(self.args, list) or len(self.args) != 2:
            self.fail(
                'Arguments to "Fn::Join" must be of the form '
                "[delimiter, [string, ...]]"
            )

    def result(self, scope):
        delim, strings = (base.resolve(a, scope) for a in self.args)
        if not isinstance(delim, str):
            self.fail('"Fn::Join" delimiter must be a string')
        if strings is None:
            return ""
        if not base.is_list(strings):
            self.fail('"Fn::Join" must operate on a list')
        for item in strings:
            if item is not None and not isinstance(item, str):
                self.fail(
                    "Items to join must be strings not %s" % base.short(item)
                )
        return delim.join(s or "" for s in strings)


class Split(base.Function):
    """A function for splitting strings: ``Fn::Split: [delim, string]``."""

    names = ("Fn::Split",)

    def validate(self, ctx):
        if not isinstance(self.args, list) or len(self.args) != 2:
            self.fail(
                'Arguments to "Fn::Split" must be of the form '
                "[delimiter, string]"
            )

    def result(self, scope):
        delim, text = (base.resolve(a, scope) for a in self.args)
        if (
            not isinstance(delim, str)
            or not delim
            or not isinstance(text, str)
        ):
            self.fail(
                'Arguments to "Fn::Split" must be a non-empty '
                "delimiter and a string"
            )
        return text.split(delim)


class Replace(base.Function):
    """A function for string substitutions: ``Fn::Replace: [{k: v}, text]``."""

    names = ("Fn::Replace",)

    def validate(self, ctx):
        if not isinstance(self.args, list) or len(self.args) != 2:
            self.fail(
                'Arguments to "Fn::Replace" must be of the form '
                "[{placeholder: value}, template]"
            )

    def result(self, scope):
        params, template = (base.resolve(a, scope) for a in self.args)
        if not isinstance(params, collections.abc.Mapping) or not all(
            isinstance(k, str) for k in params
        ):
            self.fail('"Fn::Replace" parameters must be a map of strings')
        if not isinstance(template, str):
            self.fail('"Fn::Replace" template must be a string')
        pairs = []
        for key in sorted(sorted(params), key=len, reverse=True):
            value = params[key]
            if value is not None and not isinstance(value, (str, int, float)):
                self.fail('"Fn::Replace" values must be strings or numbers')
            pairs.append((key, "" if value is None else str(value)))
        return fn_strings.substitute(template, pairs)[0]


class Base64(base.Function):
    """A placeholder function: returns its string argument unchanged."""

    names = ("Fn::Base64",)

    def result(self, scope):
        value = self.resolve_args(scope)
        if not isinstance(value, str):
            self.fail('Argument to "Fn::Base64" must be a string')
        return value


class GetAZs(base.Function):
    """A function for retrieving the availability zones."""

    names = ("Fn::GetAZs",)

    def result(self, scope):
        return list(AVAILABILITY_ZONES)


class MemberListToMap(base.Function):
    """A function to convert lists with enumerated keys and values to a map.

    ``Fn::MemberListToMap: [key_name, value_name, ["...member.0.Name=x",
    "...member.0.Value=y", ...]]``.
    """

    names = ("Fn::MemberListToMap",)

    def validate(self, ctx):
        if not isinstance(self.args, list) or len(self.args) != 3:
            self.fail('Wrong Arguments try: "[key_name, value_name, list]"')

    def result(self, scope):
        key_name, value_name, members = (
            base.resolve(a, scope) for a in self.args
        )
        if not isinstance(key_name, str) or not isinstance(value_name, str):
            self.fail('Wrong Arguments try: "[key_name, value_name, list]"')
        if not base.is_list(members) or not all(
            isinstance(m, str) for m in members
        ):
            self.fail("Member list must be a list of strings")
        entries = {}
        for member in members:
            name, _eq, value = member.partition("=")
            parts = name.split(".")
            if len(parts) < 2:
                self.fail("Wrong format of member: %s" % member)
            entries.setdefault(parts[-2], {})[parts[-1]] = value
        return {
            e[key_name]: e.get(value_name)
            for e in entries.values()
            if key_name in e
        }


class ResourceFacade(base.Function):
    """A function for retrieving data in a parent provider template."""

    names = ("Fn::ResourceFacade",)
    KINDS = {
        "Metadata": "metadata",
        "DeletionPolicy": "deletion_policy",
        "UpdatePolicy": "update_policy",
    }

    def validate(self, ctx):
        if not isinstance(self.args, str) or self.args not in self.KINDS:
            self.fail(
                'Incorrect arguments to "Fn::ResourceFacade" should '
                "be one of: %s" % ", ".join(self.KINDS)
            )

    def result(self, scope):
        return scope.facade(self.KINDS[self.args])


FUNCTIONS = (
    Ref,
    Select,
    Join,
    Split,
    Replace,
    Base64,
    GetAZs,
    MemberListToMap,
    ResourceFacade,
)
