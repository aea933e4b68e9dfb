"""The HOT template language: parsing, validation and function resolution.

Free of database and RPC imports so it is fast to test. Entry points:
``parse()`` returns a ``hot.Template``; ``functions.resolve`` evaluates a
parsed snippet against a ``functions.Scope``.
"""

from heat_lite.engine.template import hot


def parse(tmpl, files=None):
    """Return a validated ``hot.Template`` for the template mapping.

    :param files: the ``files`` map (``get_file``, template resources).
    """
    return hot.Template(tmpl, files)
