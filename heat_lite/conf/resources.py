"""Options of the built-in resource types ([DEFAULT]).

The engine never receives an HTTP request, so it cannot know the URL
under which servers reach the API; resources that hand out a signal URL
(``OS::Heat::WaitConditionHandle``) build it from these options.
"""

from oslo_config import cfg

opts = [
    cfg.StrOpt(
        "heat_waitcondition_server_url",
        help="Base URL of the heat_lite API as the servers that signal "
        "wait condition handles reach it, without the /v1 path, e.g. "
        "http://heat.example.com:8004. OS::Heat::WaitConditionHandle "
        "appends /v1/<project>/stacks/<stack>/<id>/resources/<handle>/"
        "signal to build its endpoint, curl_cli and signal attributes. "
        "(Heat's option of this name points at the CloudFormation API; "
        "here it is the native API.) Unset: http://<[api] bind_host>:"
        "<[api] bind_port>, with this host's name for a wildcard "
        "bind_host.",
    ),
]


def register_opts(conf):
    conf.register_opts(opts)


def list_opts():
    return {"DEFAULT": opts}
