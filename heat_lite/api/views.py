"""Links: the only part of a response that needs the request's URL."""

from urllib import parse


def stack_url(app_url, ident):
    return "%s/v1/%s/stacks/%s/%s%s" % (
        app_url,
        parse.quote(ident["tenant"], safe=""),
        parse.quote(ident["stack_name"], safe=""),
        parse.quote(ident["stack_id"], safe=""),
        parse.quote(ident.get("path") or "", safe="/"),
    )


def _link(href, rel):
    return {"href": href, "rel": rel}


def stack(app_url, item):
    ident = item.pop("stack_identity")
    item["links"] = [_link(stack_url(app_url, ident), "self")]
    return item


def resource(app_url, item):
    res_ident = item.pop("resource_identity")
    stack_ident = item.pop("stack_identity")
    item.pop("stack_name", None)
    nested_ident = item.pop("nested_identity", None)
    item["links"] = [
        _link(stack_url(app_url, res_ident), "self"),
        _link(stack_url(app_url, stack_ident), "stack"),
    ]
    if nested_ident:
        item["links"].append(_link(stack_url(app_url, nested_ident), "nested"))
    return item


def event(app_url, item, detail=False):
    """An event with links (``root_stack`` when listed with
    nested_depth); ``detail`` keeps its type and properties."""
    ident = item.pop("event_identity")
    stack_ident = item.pop("stack_identity")
    root_ident = item.pop("root_stack_identity", None)
    res_ident = dict(stack_ident, path="/resources/%s" % item["resource_name"])
    item["links"] = [
        _link(stack_url(app_url, ident), "self"),
        _link(stack_url(app_url, res_ident), "resource"),
        _link(stack_url(app_url, stack_ident), "stack"),
    ]
    if root_ident:
        item["links"].append(
            _link(stack_url(app_url, root_ident), "root_stack")
        )
    item.pop("resource_action", None)
    if not detail:
        item.pop("resource_properties", None)
        item.pop("resource_type", None)
    return item
