"""The pecan root controller: /v1 and below (see ``controllers.v1``)."""

from heat_lite.api.controllers import base, v1


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


class RootController(base.Branch):
    """The tree's root; / and /versions are answered in front of it
    (``app._Versions``), before authentication."""

    _children = {"v1": v1.V1}
