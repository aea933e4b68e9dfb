"""Options of OS::Heat::Stack, the stack in another cloud ([remote_stack]).

The resource reaches the other orchestration endpoint (a heat_lite or an
OpenStack Heat) through a keystoneauth1 session built from this group: an
auth plugin (``auth_type`` and that plugin's options, e.g. ``password``
with ``auth_url``, ``username``, ``password``, ``project_name``, or
``none``), the session options (``cafile``, ``insecure``, ``timeout``),
and where to find the endpoint: the service catalog, or
``endpoint_override`` for a deployment without one. When an operation
carries the token of its caller (keystone mode with ``[DEFAULT]
auth_encryption_key``), that token replaces the auth plugin; see
``doc/source/contributor/plugins.rst``.
"""

from keystoneauth1 import loading
from oslo_config import cfg

GROUP = "remote_stack"

opts = [
    cfg.StrOpt(
        "endpoint_override",
        help="URL of the remote orchestration API including the project, "
        "e.g. http://heat.example.com:8004/v1/%(project_id)s (keystoneauth "
        "fills in the project of the session's auth), instead of the "
        "service catalog's orchestration endpoint. Needed with "
        "auth_type=none.",
    ),
    cfg.StrOpt(
        "interface",
        default="public",
        choices=["public", "internal", "admin"],
        help="Which catalog endpoint of the orchestration service to use.",
    ),
    cfg.StrOpt(
        "token_auth_url",
        help="Keystone URL used to re-scope the caller's own token when "
        "an operation carries one; unset: the token is sent as it is to "
        "endpoint_override.",
    ),
    cfg.FloatOpt(
        "poll_interval",
        default=1.0,
        min=0.05,
        max=60,
        help="Seconds between two looks at the remote stack's state while "
        "an action runs there.",
    ),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)
    loading.register_auth_conf_options(conf, GROUP)
    loading.register_session_conf_options(conf, GROUP)


def list_opts():
    return {
        GROUP: opts
        + loading.get_auth_common_conf_options()
        + loading.get_session_conf_options()
        + loading.get_auth_plugin_conf_options("password")
    }
