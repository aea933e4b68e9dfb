"""list_opts() for oslo-config-generator (entry point oslo.config.opts)."""

import collections

from oslo_messaging import opts as messaging_opts

from heat_lite import conf


def list_opts():
    """Return [(group, [opts])] for every option heat_lite reads."""
    merged = collections.defaultdict(list)
    for module in conf.MODULES:
        for group, opts in module.list_opts().items():
            merged[group].extend(opts)
    for group, opts in messaging_opts.list_opts():
        if group is None:
            group = "DEFAULT"
        if group == "DEFAULT":
            opts = [
                o
                for o in opts
                if o.name
                in (
                    "transport_url",
                    "control_exchange",
                    "rpc_response_timeout",
                )
            ]
        elif group not in ("oslo_messaging_rabbit",):
            continue
        merged[group].extend(opts)
    return sorted(merged.items())
