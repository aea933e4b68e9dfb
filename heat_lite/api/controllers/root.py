"""The pecan root controller: hands every path to the v1 route table."""

import pecan

from heat_lite.api import request as api_request
from heat_lite.api.controllers import v1


def versions_document(app_url):
    """Heat's version document (served with 300 Multiple Choices)."""
    return {
        "versions": [
            {
                "id": "v1.0",
                "status": "CURRENT",
                "links": [{"rel": "self", "href": app_url + "/v1/"}],
            }
        ]
    }


class RootController:
    """Routes through ``v1.build()``'s explicit table."""

    def __init__(self, engine):
        self._engine = engine
        self._router = v1.build()

    @pecan.expose()
    def _route(self, args, request=None):
        return self.dispatch, []

    @pecan.expose(content_type="application/json")
    def dispatch(self, *args, **kwargs):
        raw = pecan.request
        path = raw.path_info
        if path.rstrip("/") in ("", "/versions"):
            return api_request.to_response(
                api_request.Reply(
                    300, versions_document(raw.host_url + raw.script_name)
                )
            )
        handler, captured = self._router.match(raw.method, path)
        req = api_request.Request(raw, self._engine, handler)
        req.authorize(handler.policy_rule, captured.get("tenant"))
        return api_request.conditional(
            api_request.to_response(handler(req, **captured)), raw
        )
