"""Options of the OpenStack resource types ([openstack]).

``OS::Nova::*``, ``OS::Neutron::*`` and the other cloud types act in an
OpenStack cloud through openstacksdk. In noauth mode they act as one
identity the operator configures here: either an entry of a
``clouds.yaml`` (``cloud``, and ``clouds_yaml`` for its path) or a
keystoneauth1 auth plugin with its options (``auth_type = password``,
``auth_url``, ``username``, ``password``, ``project_name``, ...) and the
session options (``cafile``, ``insecure``, ``timeout``). Endpoints come
from the service catalog of that identity, chosen by ``region_name`` and
``interface``.
"""

from keystoneauth1 import loading
from oslo_config import cfg

GROUP = "openstack"

opts = [
    cfg.StrOpt(
        "cloud",
        help="Name of a clouds.yaml entry to act as (see clouds_yaml). "
        "When set, it is used instead of this group's auth options.",
    ),
    cfg.StrOpt(
        "clouds_yaml",
        help="Path of the clouds.yaml that holds ``cloud``. Unset: "
        "openstacksdk's own search ($OS_CLIENT_CONFIG_FILE, ./clouds.yaml, "
        "~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml).",
    ),
    cfg.StrOpt(
        "region_name",
        help="Region whose catalog endpoints are used. Unset: the "
        "clouds.yaml entry's region, else the only region there is.",
    ),
    cfg.StrOpt(
        "interface",
        default="public",
        choices=["public", "internal", "admin"],
        help="Which catalog endpoint of each service to use.",
    ),
    cfg.FloatOpt(
        "poll_interval",
        default=1.0,
        min=0.05,
        max=60,
        help="Seconds between two looks at a cloud resource (a server "
        "booting, a server being deleted) while an action waits for it.",
    ),
    cfg.IntOpt(
        "connect_retries",
        default=0,
        min=0,
        max=10,
        help="Times a request to the cloud whose connection failed (refused, "
        "reset, or closed by the server before any answer) is sent again, "
        "for every method, as Heat's ``client_retry_limit`` (2 in Heat). "
        "0 by default: a create or an action that may have reached the "
        "cloud is never sent twice (polls are tried again anyway, see "
        "``transient_retry_timeout``). Connections idle for more than a "
        "second are not reused, so a server's keep-alive timeout does not "
        "fail requests.",
    ),
    cfg.FloatOpt(
        "transient_retry_timeout",
        default=60.0,
        min=0,
        max=3600,
        help="Seconds during which a delete that the cloud answers with "
        "409 Conflict or 503 (e.g. a network whose ports Nova is still "
        "removing), and a poll of an action's progress that gets no "
        "answer (connection reset, refused or timed out; 500, 502, 503 "
        "or 504), are tried again, with growing pauses, before the "
        "resource fails with the cloud's message. 0: no retry.",
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
