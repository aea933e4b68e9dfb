"""Options of saved plans (``engine.plans``, doc/specs/saved_plans.md)."""

from oslo_config import cfg

GROUP = "plans"

opts = [
    cfg.IntOpt(
        "ttl",
        default=3600,
        min=60,
        max=7 * 86400,
        help="Seconds a saved plan of an update can be applied after it "
        "was made; an older one is EXPIRED and its apply refused (409).",
    ),
    cfg.IntOpt(
        "max_per_stack",
        default=100,
        min=1,
        max=10000,
        help="Saved plans one stack keeps at most: making one more deletes "
        "the oldest beyond this number.",
    ),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)


def list_opts():
    return {GROUP: opts}
