"""heat_lite's own API calls, through heatclient's HTTP client: the
same session, endpoint, headers and error mapping (a 4xx is heatclient's
``HTTPException`` with the server's message) as ``openstack stack``."""

from heatclient import exc
from heatclient.common import utils as heat_utils
from osc_lib import exceptions


def call(client, method, path, body=None):
    """``method`` ``path`` (under ``/v1/<project>``) with a JSON body;
    the decoded answer (None for an empty one)."""
    kwargs = {} if body is None else {"data": body}
    send = getattr(client.http_client, method.lower())
    response = send(path, **kwargs)
    if not response.content:
        return None
    return heat_utils.get_response_body(response)


def find_rollout(client, name_or_id):
    """The rollout with this id, else the only one with this name."""
    try:
        return call(client, "GET", "/rollouts/%s" % name_or_id)["rollout"]
    except exc.HTTPNotFound:
        pass
    listed = call(client, "GET", "/rollouts")["rollouts"]
    named = [r for r in listed if r["name"] == name_or_id]
    if not named:
        raise exceptions.CommandError("Rollout not found: %s" % name_or_id)
    if len(named) > 1:
        raise exceptions.CommandError(
            "More than one rollout is named %s: use its ID" % name_or_id
        )
    return call(client, "GET", "/rollouts/%s" % named[0]["id"])["rollout"]
