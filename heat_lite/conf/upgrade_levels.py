"""Options of a rolling upgrade: the RPC versions this process may send
(``engine.rpcapi``), as Nova's and Heat's ``[upgrade_levels]``.

While engines of the previous release still run, every API and engine
of the new one sends at most what the old engines understand; once the
last old engine is gone, the pins are removed (and the services
restarted) and the new calls are sent.
"""

from oslo_config import cfg

GROUP = "upgrade_levels"

_VERSION = r"^\d+\.\d+$"

opts = [
    cfg.StrOpt(
        "engine",
        regex=_VERSION,
        help="The highest engine-topic RPC version to send (for example "
        "``1.17``: the version the engines still running the previous "
        "release serve; their ``heat-lite-engine --version`` log line "
        "says it). Unset: this release's own. A call that needs a newer "
        "version is refused with 409 instead of reaching an engine that "
        "could not serve it.",
    ),
    cfg.StrOpt(
        "worker",
        regex=_VERSION,
        help="The highest worker-topic RPC version to send (the casts "
        "engines send each other: resource checks, drift detections). "
        "Unset: this release's own.",
    ),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)


def list_opts():
    return {GROUP: opts}
