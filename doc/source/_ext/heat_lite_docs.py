"""Sphinx directives that generate heat_lite's reference pages from the
code, so that they cannot drift from what is served:

``.. heat-lite-api::``
    The v1 REST API, from ``heat_lite.api.openapi.build()``: the OpenAPI
    document that ``GET /v1/openapi.json`` serves, itself walked from the
    controller tree (paths, methods, policy rules, query parameters,
    request and response schemas).

``.. heat-lite-resource-types::``
    Every resource type in the plugin registry (the ``heat_lite.resources``
    entry points of the installed distributions), with its properties and
    attributes as the engine validates and resolves them.

Both produce reStructuredText that is parsed in place; text taken from
docstrings and help strings is escaped, so a plugin's prose cannot break
the build.
"""

import collections
import json
import re
import sys
import warnings

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

_ESCAPE = re.compile(r"([\\`*_|\[\]<>])")
_IDENTIFIER = re.compile(r"^\w+$")
# The groups of the API reference, in reading order: the first path
# segment after the project (``/v1/{tenant}/<segment>``), and for stack
# paths the segment after the stack's id.
_API_GROUPS = [
    ("stacks", "Stacks"),
    ("stacks/actions", "Stack actions"),
    ("stacks/outputs", "Outputs"),
    ("stacks/resources", "Resources"),
    ("stacks/events", "Events"),
    ("stacks/snapshots", "Snapshots"),
    ("stacks/verdict", "Verification"),
    ("rollouts", "Rollouts"),
    ("promotions", "Promotions"),
    ("apps", "Apps"),
    ("references", "References"),
    ("software_configs", "Software configs"),
    ("validate", "Templates and resource types"),
    ("build_info", "Service information"),
]
_GROUP_ALIASES = {
    "stacks/promotions": "promotions",
    "stacks/changes": "stacks",
    "changes": "stacks",
    "template_versions": "validate",
    "resource_types": "validate",
    "services": "build_info",
}


def _escape(text):
    """``text`` as literal reStructuredText prose, on one line."""
    return _ESCAPE.sub(r"\\\1", " ".join(str(text).split()))


def _prose(text):
    """A docstring's first paragraph as inline prose: ``literals`` kept,
    everything else escaped."""
    paragraph = (text or "").strip().split("\n\n")[0]
    parts = re.split(r"(``[^`]+``)", " ".join(paragraph.split()))
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 0:  # prose between literals
            out.append(_ESCAPE.sub(r"\\\1", part))
            continue
        # A literal glued to a word ("``id``s") is not markup in reST:
        # an escaped space separates them and renders as nothing.
        if parts[i - 1][-1:].isalnum():
            out.append("\\ ")
        out.append(part)
        if parts[i + 1][:1].isalnum():
            out.append("\\ ")
    return "".join(out)


def _parse(directive, lines):
    """Parse generated reST lines into nodes, sections allowed."""
    content = StringList()
    source = directive.get_source_info()[0] or "<generated>"
    for number, line in enumerate(lines):
        content.append(line, source, number)
    holder = nodes.section()
    holder.document = directive.state.document
    nested_parse_with_titles(directive.state, content, holder)
    return holder.children


# -- the REST API ---------------------------------------------------------


def _outline(schema, depth=0):
    """A JSON schema as a compact outline of the document it describes:
    each property mapped to its type (``"string"``), objects nested,
    arrays as a one-item list. Required properties are marked ``*``."""
    if depth > 12 or not isinstance(schema, dict):
        return "any"
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " | ".join(
                json.dumps(_outline(s, depth + 1)).strip('"')
                for s in schema[key]
            )
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties")
        if not props:
            return "object"
        required = set(schema.get("required", ()))
        return {
            name + ("*" if name in required else ""): _outline(sub, depth + 1)
            for name, sub in props.items()
        }
    if kind == "array":
        return [_outline(schema.get("items", {}), depth + 1)]
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    text = kind or "any"
    if schema.get("nullable"):
        text += " or null"
    return text


def _group(path):
    segments = path.split("/")[3:]  # after "", "v1", "{tenant}"
    key = segments[0]
    if key == "stacks" and len(segments) > 3 and segments[1] == "{name}":
        key = "stacks/" + segments[3]
    # A route family not in _API_GROUPS gets a section of its own,
    # titled by its segment: documented before anyone names it.
    return _GROUP_ALIASES.get(key, key)


def _operation_lines(path, method, op):
    lines = [".. _api-%s:" % op["operationId"].replace("_", "-"), ""]
    title = "``%s %s``" % (method.upper(), path)
    lines += [title, "~" * len(title), ""]
    summary = op.get("summary", "")
    if summary and not _IDENTIFIER.match(summary):
        lines += [_prose(summary), ""]
    success = sorted(c for c in op["responses"] if c < "400")
    rule = op.get("x-policy-rule")
    lines += [
        (
            ":Policy rule: ``%s``" % rule
            if rule
            else ":Policy rule: none (no token: the request carries its "
            "own credential)"
        ),
        ":Success: %s" % ", ".join(success),
        ":Operation: ``%s``" % op["operationId"],
    ]
    query = [p for p in op["parameters"] if p["in"] == "query"]
    if query:
        lines.append(
            ":Query parameters: "
            + ", ".join(
                "``%s`` (%s)" % (p["name"], _outline(p.get("schema", {})))
                for p in query
            )
        )
    lines.append("")
    body = op.get("requestBody")
    if body:
        schema = body["content"]["application/json"]["schema"]
        optional = "" if body.get("required") else " (optional)"
        lines += [
            "Request body%s:" % optional,
            "",
            ".. code-block:: json",
            "",
        ]
        text = json.dumps(_outline(schema), indent=2)
        lines += ["   " + line for line in text.splitlines()] + [""]
    for code in success:
        content = op["responses"][code].get("content")
        if not content:
            continue
        schema = content["application/json"]["schema"]
        lines += ["Answer (%s):" % code, "", ".. code-block:: json", ""]
        text = json.dumps(_outline(schema), indent=2)
        lines += ["   " + line for line in text.splitlines()] + [""]
    return lines


def api_lines(document):
    """The API reference as reST lines, from an OpenAPI document."""
    groups = collections.OrderedDict((key, []) for key, _ in _API_GROUPS)
    titles = dict(_API_GROUPS)
    for path, methods in document["paths"].items():
        key = _group(path)
        groups.setdefault(key, [])
        for method, op in methods.items():
            groups[key].append((path, method, op))
    lines = []
    for key, operations in groups.items():
        if not operations:
            continue
        title = titles.get(key, key)
        lines += [title, "-" * max(len(title), 4), ""]
        for path, method, op in operations:
            lines += _operation_lines(path, method, op)
    return lines


class APIDirective(SphinxDirective):
    """``.. heat-lite-api::`` -- the whole v1 API reference."""

    has_content = False

    def run(self):
        from heat_lite.api import openapi

        document = openapi.build()
        errors = sorted(
            {
                "``%s`` %s" % (code, response["description"])
                for methods in document["paths"].values()
                for op in methods.values()
                for code, response in op["responses"].items()
                if code >= "400"
            }
        )
        lines = [
            "The document at ``GET /v1/openapi.json`` (OpenAPI %s, %d paths)"
            " is built from the same route tree as this page. Every "
            "operation may also answer, with a Heat JSON error body:"
            % (document["openapi"], len(document["paths"])),
            "",
        ]
        lines += ["- %s" % _escape(e).replace("\\`\\`", "``") for e in errors]
        lines += [
            "",
            "In the outlines below, ``*`` marks a required property and "
            "``{tenant}`` is the project.",
            "",
        ]
        return _parse(self, lines + api_lines(document))


# -- resource types -------------------------------------------------------


def _type_summary(name, cls):
    """What the type is: the class's docstring, or its module's when the
    class refers to it (or has none)."""
    own = (cls.__doc__ or "").strip()
    if own and "module docstring" not in own:
        return _prose(own)
    module = sys.modules.get(cls.__module__)
    text = (getattr(module, "__doc__", None) or "").strip()
    if text.startswith(name + ": "):
        text = text[len(name) + 2 :]
        text = text[:1].upper() + text[1:]
    return _prose(text)


def _property_rows(schema, prefix=""):
    rows = []
    for name, prop in (schema or {}).items():
        flags = []
        if prop.required:
            flags.append("required")
        if prop.update_allowed:
            flags.append("updatable")
        if prop.immutable:
            flags.append("immutable")
        if prop.default is not None:
            flags.append("default ``%s``" % json.dumps(prop.default))
        rows.append(
            (
                "``%s%s``" % (prefix, name),
                _escape(prop.type.lower()),
                ", ".join(flags) or "\\-",
                _prose(prop.description) or "\\-",
            )
        )
        if isinstance(prop.schema, dict):
            rows += _property_rows(prop.schema, prefix + name + ".")
    return rows


def _table(header, rows, widths):
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: %s" % " ".join(str(w) for w in widths),
        "",
    ]
    for row in [header] + rows:
        lines.append("   * - %s" % row[0])
        lines += ["     - %s" % cell for cell in row[1:]]
    return lines + [""]


def resource_type_lines(types):
    lines = []
    for name in sorted(types):
        cls = types[name]
        lines += [".. _resource-%s:" % name.replace("::", "-").lower(), ""]
        lines += [name, "-" * len(name), ""]
        summary = _type_summary(name, cls)
        if summary:
            lines += [summary, ""]
        if cls.properties_schema is None:
            lines += ["Any properties are accepted, unchecked.", ""]
        else:
            rows = _property_rows(cls.properties_schema)
            if rows:
                lines += ["Properties:", ""]
                lines += _table(
                    ("property", "type", "", "description"),
                    rows,
                    (20, 10, 20, 50),
                )
            else:
                lines += ["No properties.", ""]
        attrs = []
        for attr, value in sorted((cls.attributes_schema or {}).items()):
            text = value if isinstance(value, str) else value.description
            attrs.append(("``%s``" % attr, _prose(text) or "\\-"))
        if "show" not in (cls.attributes_schema or {}):
            attrs.append(("``show``", "All of the resource's own data."))
        lines += ["Attributes:", ""]
        lines += _table(("attribute", "description"), attrs, (25, 75))
    return lines


class ResourceTypesDirective(SphinxDirective):
    """``.. heat-lite-resource-types::`` -- every registered type."""

    has_content = False

    def run(self):
        from heat_lite.resources import registry

        types = registry.load()
        lines = [
            "%d types are registered in this build (the "
            "``heat_lite.resources`` entry points); an installed plugin "
            "package adds its own." % len(types),
            "",
        ]
        return _parse(self, lines + resource_type_lines(types))


def setup(app):
    # Importing heat_lite's engine side pulls in libraries that announce
    # their own deprecations; they are not the documentation's warnings.
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    app.add_directive("heat-lite-api", APIDirective)
    app.add_directive("heat-lite-resource-types", ResourceTypesDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
