"""Handlers of /validate, /template_versions and /resource_types."""

from heat_lite.api import schemas
from heat_lite.api.controllers.v1 import stack_body
from heat_lite.api.request import Reply, query, rule
from heat_lite.common import exception

TEMPLATE_TYPES = ("cfn", "hot")
# Heat's codes of errors a validate may be told to ignore (its
# ERROR_CODE_MAP): 99001, a type whose service the catalog lacks, which
# heat_lite never raises (its types do not depend on the catalog).
IGNORABLE_ERRORS = ("99001",)


def _check_ignore_errors(value):
    """Refuse ``ignore_errors`` codes Heat does not know, as Heat does."""
    if value is None:
        return
    invalid = sorted(set(value.split(",")) - set(IGNORABLE_ERRORS))
    if invalid:
        raise exception.Invalid(
            message="Invalid codes in ignore_errors : %s" % invalid
        )


@rule("stacks:validate_template")
@query(show_nested=schemas.Q_BOOL, ignore_errors=schemas.STRING)
def validate(req, tenant):
    """Validate a template with its environment: Heat's document."""
    _check_ignore_errors(req.params.get("ignore_errors"))
    body = req.body()
    params, files, environment, env_files = stack_body.sources(body)
    doc = req.engine.validate_template(
        req.context,
        stack_body.template(body),
        params,
        files,
        environment,
        env_files,
        show_nested=req.bool_param("show_nested"),
    )
    return Reply(200, doc)


@rule("stacks:list_template_versions")
def list_versions(req, tenant):
    """List the template versions the engine knows."""
    versions = req.engine.list_template_versions(req.context)
    return Reply(200, {"template_versions": versions})


@rule("stacks:list_template_functions")
@query(with_condition_func=schemas.Q_BOOL)
def list_functions(req, tenant, version):
    """List the functions of a template version."""
    functions = req.engine.list_template_functions(
        req.context,
        version,
        with_condition_func=req.bool_param("with_condition_func"),
    )
    return Reply(200, {"template_functions": functions})


@rule("stacks:list_resource_types")
@query(
    support_status=schemas.STRING,
    name=schemas.STRING,
    version=schemas.STRING,
    with_description=schemas.Q_BOOL,
)
def list_resource_types(req, tenant):
    """List the installed resource types."""
    types = req.engine.list_resource_types(
        req.context,
        support_status=req.params.get("support_status"),
        type_name=req.params.get("name"),
        heat_version=req.params.get("version"),
        with_description=req.bool_param("with_description"),
    )
    return Reply(200, {"resource_types": types})


@rule("stacks:resource_schema")
@query(with_description=schemas.Q_BOOL)
def resource_schema(req, tenant, type_name):
    """Show a resource type's properties and attributes."""
    return Reply(
        200,
        req.engine.resource_schema(
            req.context,
            type_name,
            with_description=req.bool_param("with_description"),
        ),
    )


@rule("stacks:generate_template")
@query(template_type={"type": "string", "enum": list(TEMPLATE_TYPES)})
def generate_template(req, tenant, type_name):
    """A template using a resource type (``hot`` or ``cfn``)."""
    template_type = req.params.get("template_type", "cfn")
    if template_type not in TEMPLATE_TYPES:
        raise exception.Invalid(
            message="Template type is not supported: %s" % template_type
        )
    return Reply(
        200,
        req.engine.generate_template(
            req.context, type_name, template_type=template_type
        ),
    )
