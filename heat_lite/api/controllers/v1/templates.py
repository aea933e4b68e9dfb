"""Handlers of /validate and /template_versions."""

from heat_lite.api.controllers.v1.stacks import _template
from heat_lite.api.request import Reply


def validate(req, tenant):
    body = req.body()
    doc = req.engine.validate_template(
        req.context, _template(body), body.get("parameters") or {},
        body.get("files") or {}, body.get("environment"),
        body.get("environment_files"),
        show_nested=req.bool_param("show_nested"))
    return Reply(200, doc)


def list_versions(req, tenant):
    versions = req.engine.list_template_versions(req.context)
    return Reply(200, {"template_versions": versions})


def list_functions(req, tenant, version):
    functions = req.engine.list_template_functions(
        req.context, version,
        with_condition_func=req.bool_param("with_condition_func"))
    return Reply(200, {"template_functions": functions})
