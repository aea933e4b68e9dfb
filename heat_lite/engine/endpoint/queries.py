"""Stack queries: which stacks a selector matches, and with what.

A selector has up to five clauses, all of which must hold; patterns are
shell globs (``fnmatch``, case-sensitive)::

    {"stack_name": "app-*",
     "tags": ["php"],                       # every one present
     "parameters": {"php_version": "5.4.*"},
     "resources": [{"type": "OS::Nova::Server", "name": "*",
                    "properties": {"image": "php-5.4*"}}],
     "status": ["CREATE_COMPLETE", "UPDATE_COMPLETE"]}

Parameters are the stack's values: its environment's, else the template's
default. Resource properties are the resolved properties of current
records (``properties_data``, stored when a record converges); a string
pattern matches a string or a number by glob, any other value by
equality. The database narrows by name, status and tags first
(``db.queries``); the exact patterns are checked here.
"""

import fnmatch
import json

from heat_lite.common import exception
from heat_lite.db import queries as db_queries

CLAUSES = ("stack_name", "tags", "parameters", "resources", "status")
_RESOURCE_KEYS = ("type", "name", "properties")
_GLOB_CHARS = "*?["


def _invalid(reason):
    return exception.InvalidSelector(reason=reason)


def _glob(value, where):
    if not isinstance(value, str):
        raise _invalid("%s must be a string pattern" % where)
    return value


def _globs(value, where):
    if not isinstance(value, list) or not value:
        raise _invalid("%s must be a non-empty list of strings" % where)
    return [_glob(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)]


def _resource_clause(index, clause):
    where = "resources[%d]" % index
    if not isinstance(clause, dict) or not clause:
        raise _invalid("%s must be a non-empty map" % where)
    unknown = sorted(set(clause) - set(_RESOURCE_KEYS))
    if unknown:
        raise _invalid("%s: unknown key %s" % (where, ", ".join(unknown)))
    props = clause.get("properties", {})
    if not isinstance(props, dict):
        raise _invalid("%s.properties must be a map" % where)
    return {
        "type": _glob(clause.get("type", "*"), where + ".type"),
        "name": _glob(clause.get("name", "*"), where + ".name"),
        "properties": props,
    }


def parse(selector):
    """Check a selector; return it normalised.

    :raises InvalidSelector: on unknown clauses or wrong shapes.
    """
    if not isinstance(selector, dict) or not selector:
        raise _invalid("selector must be a non-empty map")
    unknown = sorted(set(selector) - set(CLAUSES))
    if unknown:
        raise _invalid("unknown clause %s" % ", ".join(unknown))
    result = {}
    if "stack_name" in selector:
        result["stack_name"] = _glob(selector["stack_name"], "stack_name")
    if "tags" in selector:
        result["tags"] = _globs(selector["tags"], "tags")
    if "status" in selector:
        result["status"] = _globs(selector["status"], "status")
    if "parameters" in selector:
        params = selector["parameters"]
        if not isinstance(params, dict) or not params:
            raise _invalid("parameters must be a non-empty map")
        result["parameters"] = {
            k: _glob(v, "parameters.%s" % k) for k, v in params.items()
        }
    if "resources" in selector:
        clauses = selector["resources"]
        if not isinstance(clauses, list) or not clauses:
            raise _invalid("resources must be a non-empty list")
        result["resources"] = [
            _resource_clause(i, c) for i, c in enumerate(clauses)
        ]
    return result


# SQL narrowing ------------------------------------------------------------
def like_of(pattern):
    """A ``LIKE`` pattern (escape ``\\``) every string the glob matches
    also matches: the glob up to its first ``[`` (then anything)."""
    out = []
    for char in pattern:
        if char == "[":
            out.append("%")
            break
        if char == "*":
            out.append("%")
        elif char == "?":
            out.append("_")
        elif char in "%_\\":
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _statuses(patterns):
    """[(action, status)] for SQL if every pattern is literal, else None."""
    if any(c in p for p in patterns for c in _GLOB_CHARS):
        return None
    pairs = []
    for pattern in patterns:
        action, _, status = pattern.partition("_")
        pairs.append((action, status))
    return pairs


def _tag_likes(tags):
    # Tags are stored as a JSON list: '["php", "web"]'.
    return ['%%"%s"%%' % like_of(t) for t in tags]


# Matching -----------------------------------------------------------------
def _value_matches(pattern, value):
    if isinstance(pattern, str):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return False
        return fnmatch.fnmatchcase(str(value), pattern)
    return pattern == value


def _match_tags(patterns, tags):
    found = []
    for pattern in patterns:
        hit = next((t for t in tags if fnmatch.fnmatchcase(t, pattern)), None)
        if hit is None:
            return None
        found.append(hit)
    return found


def _parameter_values(env_text, template_text):
    params = dict(json.loads(template_text or "{}").get("parameters") or {})
    values = {
        k: v.get("default")
        for k, v in params.items()
        if isinstance(v, dict) and "default" in v
    }
    values.update(json.loads(env_text or "{}").get("parameters") or {})
    return values


def _match_parameters(patterns, values):
    matched = {}
    for name, pattern in patterns.items():
        if name not in values or not _value_matches(pattern, values[name]):
            return None
        matched[name] = values[name]
    return matched


def _match_resource(clause, records):
    for record in records:
        if not fnmatch.fnmatchcase(record["type"], clause["type"]):
            continue
        if not fnmatch.fnmatchcase(record["name"], clause["name"]):
            continue
        props = json.loads(record["properties_data"] or "{}")
        wanted = clause["properties"]
        if all(
            k in props and _value_matches(p, props[k])
            for k, p in wanted.items()
        ):
            return {
                "name": record["name"],
                "type": record["type"],
                "properties": {k: props[k] for k in wanted},
            }
    return None


class Query:
    """One selector run against the database."""

    def __init__(self, selector, tenant):
        self.selector = parse(selector)
        self.tenant = tenant

    def run(self):
        """:returns: [{id, stack_name, stack_status, project, matched}]
        in a stable order (name, then id)."""
        sel = self.selector
        name = sel.get("stack_name")
        candidates = db_queries.stack_candidates(
            self.tenant,
            name_like=like_of(name) if name is not None else None,
            statuses=_statuses(sel["status"]) if "status" in sel else None,
            tag_likes=_tag_likes(sel.get("tags", ())),
        )
        results = []
        for stack in candidates:
            matched = self._match_stack(stack)
            if matched is not None:
                results.append((stack, matched))
        if "parameters" in sel:
            results = self._with_parameters(results)
        if "resources" in sel:
            results = self._with_resources(results)
        return [
            {
                "id": s["id"],
                "stack_name": s["name"],
                "stack_status": "%s_%s" % (s["action"], s["status"]),
                "project": s["tenant"],
                "matched": m,
            }
            for s, m in results
        ]

    def _match_stack(self, stack):
        sel, matched = self.selector, {}
        if "stack_name" in sel:
            if not fnmatch.fnmatchcase(stack["name"], sel["stack_name"]):
                return None
            matched["stack_name"] = stack["name"]
        if "status" in sel:
            status = "%s_%s" % (stack["action"], stack["status"])
            if not any(fnmatch.fnmatchcase(status, p) for p in sel["status"]):
                return None
            matched["status"] = status
        if "tags" in sel:
            tags = json.loads(stack["tags"]) if stack["tags"] else []
            found = _match_tags(sel["tags"], tags)
            if found is None:
                return None
            matched["tags"] = found
        return matched

    def _with_parameters(self, results):
        patterns = self.selector["parameters"]
        ids = [s["raw_template_id"] for s, _ in results]
        texts = db_queries.templates_of(ids)
        kept, defaults = [], []
        for stack, matched in results:
            env = json.loads(texts.get(stack["raw_template_id"], ("{}",))[0])
            if set(patterns) <= set(env.get("parameters") or {}):
                kept.append((stack, matched))
            else:
                defaults.append((stack, matched))
        # Only stacks leaving a parameter to its default need the template.
        if defaults:
            texts.update(
                db_queries.templates_of(
                    [s["raw_template_id"] for s, _ in defaults], True
                )
            )
            kept += defaults
        out = []
        for stack, matched in kept:
            env_text, template_text = texts[stack["raw_template_id"]]
            found = _match_parameters(
                patterns, _parameter_values(env_text, template_text)
            )
            if found is not None:
                out.append((stack, dict(matched, parameters=found)))
        out.sort(key=lambda item: (item[0]["name"], item[0]["id"]))
        return out

    def _with_resources(self, results):
        clauses = self.selector["resources"]
        type_likes = [like_of(c["type"]) for c in clauses]
        records = db_queries.current_resources(
            [s["id"] for s, _ in results], type_likes
        )
        out = []
        for stack, matched in results:
            found = []
            for clause in clauses:
                hit = _match_resource(clause, records.get(stack["id"], []))
                if hit is None:
                    break
                found.append(hit)
            else:
                out.append((stack, dict(matched, resources=found)))
        return out
