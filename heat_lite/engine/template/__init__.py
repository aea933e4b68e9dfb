"""The HOT template language: parsing, validation and function resolution.

Free of database and RPC imports so it is fast to test. Entry points:
``parse()`` returns a ``hot.Template`` (static validation) whose
``bind(environment, stack_info)`` gives a ``hot.BoundTemplate``;
``functions.resolve`` evaluates a parsed snippet against a
``functions.Scope``. ``environment``, ``registry``, ``validate`` and
``versions`` hold the environment format, the resource registry, the
validate document and the version tables.
"""

from heat_lite.engine.template import hot


def parse(tmpl, files=None):
    """Return a validated ``hot.Template`` for the template mapping.

    :param files: the ``files`` map (``get_file``, template resources);
        when given, literal ``get_file`` keys must be in it.
    :raises StackValidationFailed, InvalidTemplateVersion,
        InvalidTemplateSection, InvalidTemplateReference,
        CircularDependencyException, UserParameterMissing: for a template
        that is not valid, the message naming the path in the template.
    """
    return hot.Template(tmpl, files)
