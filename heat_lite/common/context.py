"""The request context that travels from the API over RPC to the engine."""

from oslo_context import context

# Starts every wait condition handle's own token (no Keystone token does):
# in keystone mode such a token may signal its handle, and nothing else
# (see api.auth.HandleTokens).
HANDLE_TOKEN_PREFIX = "hlwc-"
# The query parameter of a signal URL that carries such a token instead
# of the X-Auth-Token header (a software deployment's CFN_SIGNAL URL: the
# agent POSTs to it as it is).
SIGNAL_TOKEN_PARAM = "token"


class RequestContext(context.RequestContext):
    """oslo.context's context; project_id scopes every stack query.

    ``handle_token``: the wait condition handle token a signal came with
    (keystone mode, no Keystone identity); the engine accepts the request
    only for the handle that token belongs to.
    """

    def __init__(self, *args, handle_token=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.handle_token = handle_token

    def to_dict(self):
        values = super().to_dict()
        if self.handle_token:
            values["handle_token"] = self.handle_token
        # oslo.context leaves the user's name out (only its IDs travel):
        # a stack shows it as its owner, as Heat's does.
        if self.user_name:
            values["user_name"] = self.user_name
        return values

    @classmethod
    def from_dict(cls, values, **kwargs):
        kwargs.setdefault("handle_token", values.get("handle_token"))
        kwargs.setdefault("user_name", values.get("user_name"))
        return super().from_dict(values, **kwargs)


def get_admin_context():
    """A context for engine-internal work (recovery, watchdogs)."""
    return RequestContext(is_admin=True, roles=["admin"], overwrite=False)
