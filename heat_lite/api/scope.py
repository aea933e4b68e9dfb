"""keystone mode: the caller's roles in another project, for a request
that acts there (a promotion into another project).

The caller's token is scoped to one project; to learn (and prove) its
roles in the other, the token is rescoped there with Keystone's token
method. Keystone refuses a user with no role on that project: that is a
403 here. Noauth mode has no token: None, and the caller's own roles
stand for both projects.
"""

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from heat_lite import conf
from heat_lite.common import exception

CONF = conf.CONF


def _auth_url():
    group = CONF.keystone_authtoken
    url = getattr(group, "www_authenticate_uri", None)
    if not url:
        raise exception.Forbidden(
            message="[keystone_authtoken] www_authenticate_uri is needed "
            "to act in another project"
        )
    url = url.rstrip("/")
    return url if url.endswith("/v3") else url + "/v3"


def in_project(ctxt, project_id):
    """``{"auth_token", "roles"}`` of the caller in ``project_id``, or
    None without a token (noauth).

    :raises Forbidden: if Keystone gives the caller no token there.
    """
    token = getattr(ctxt, "auth_token", None)
    if CONF.api.auth_strategy != "keystone" or not token:
        return None
    auth = v3.Token(auth_url=_auth_url(), token=token, project_id=project_id)
    try:
        access = auth.get_access(ks_session.Session())
    except (ks_exc.Unauthorized, ks_exc.Forbidden, ks_exc.NotFound):
        raise exception.Forbidden(
            message="You have no role on project %s" % project_id
        ) from None
    except ks_exc.ClientException as exc:
        raise exception.ServiceUnavailable(
            message="Keystone could not be asked about project %s: %s"
            % (project_id, exc)
        ) from None
    return {"auth_token": access.auth_token, "roles": list(access.role_names)}
