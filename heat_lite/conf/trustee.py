"""Options of the Keystone trusts heat_lite acts through ([trustee] and
``[DEFAULT] trusts_delegated_roles``).

In keystone mode a stack's cloud resources act as the user who created
the stack: when the operation is accepted, the engine uses that user's
token to create a Keystone trust from the user (trustor) to heat_lite's
service user (trustee), on the stack's project, with
``trusts_delegated_roles``. Every later action on the stack -- polls,
engine-initiated work, operations another engine takes over -- logs in
as the trustee with that trust (keystoneauth1 ``trust_id``), so no action
depends on a token that expires. The trust is deleted with the stack.

``[trustee]`` holds the trustee's keystoneauth1 auth plugin and options
(``auth_type = password``, ``auth_url``, ``username``, ``password``,
``user_domain_name``, ...), without a project: the trust gives the scope.
Unset ``auth_type``: no trusts are made, and the OpenStack resource types
refuse to act in keystone mode.
"""

from keystoneauth1 import loading
from oslo_config import cfg

GROUP = "trustee"

default_opts = [
    cfg.ListOpt(
        "trusts_delegated_roles",
        default=[],
        help="Roles of the requesting user that the trust made for each "
        "stack delegates to heat_lite's service user (keystone mode). "
        "Empty: every role the user's token has on the project. A role "
        "the user does not have makes the stack create fail with 400.",
    ),
]


def register_opts(conf):
    conf.register_opts(default_opts)
    loading.register_auth_conf_options(conf, GROUP)
    loading.register_session_conf_options(conf, GROUP)


def list_opts():
    return {
        "DEFAULT": default_opts,
        GROUP: loading.get_auth_common_conf_options()
        + loading.get_session_conf_options()
        + loading.get_auth_plugin_conf_options("password"),
    }
