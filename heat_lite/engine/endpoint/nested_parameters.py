"""``NestedParameters`` of a validate with ``show_nested``: what Heat's
validate shows of the templates a template uses as resource types.

For each resource of a stack whose type is a template (a file of
``files``, or a registry entry naming one), its entry is the child
template's ``Description``, the resource's ``Type`` as written, its
``Parameters`` described as the top level's are (``Value`` where the
resource passes one, hidden values masked), and, if that template uses
templates in turn, their ``NestedParameters``. The child is bound the way
a preview binds it (``preview.child_preview``), within the same resource
budget and nesting depth as a create, but, as in Heat, not checked: a
validate checks the top level's resources only (a create checks each
level as it makes it), and a property the child template does not
declare is left out rather than refused.
"""

from heat_lite.common import exception
from heat_lite.engine import definitions, validation
from heat_lite.engine.endpoint import preview
from heat_lite.engine.template import validate as tmpl_validate
from heat_lite.resources import template_resource


def _passed(defn, cls, scope):
    """The values ``defn`` passes to its template's parameters (None
    where a value is not known before the create)."""
    try:
        values = defn.resolve_properties(scope) or {}
    except exception.HeatLiteException:
        values = {}
    return {k: values.get(k) for k in cls.properties_schema if k in values}


def nested_parameters(stack, bound, budget=None):
    """{resource name: entry} for the template resources of ``bound``.

    :param stack: the stack dict the children are named after
        (``preview.child_preview``).
    """
    budget = budget or preview.Budget(bound)
    scope = validation.ValidationScope(bound)
    found = {}
    for name, defn in bound.resources.items():
        cls = definitions.plugin_class(
            bound.environment, name, defn.type, bound.files
        )
        if not issubclass(cls, template_resource.TemplateResource):
            continue
        child, child_bound = preview.child_preview(
            stack,
            bound,
            defn,
            cls,
            _passed(defn, cls, scope),
            budget,
            check=False,
        )
        entry = {
            "Type": defn.type,
            "Description": child_bound.template.description,
            "Parameters": {
                pname: tmpl_validate.describe_parameter(
                    param, child_bound.environment
                )
                for pname, param in child_bound.template.parameters.items()
            },
        }
        deeper = nested_parameters(child, child_bound, budget)
        if deeper:
            entry["NestedParameters"] = deeper
        found[name] = entry
    return found
