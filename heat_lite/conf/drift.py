"""Options of periodic drift detection (``engine.drift.periodic``)."""

from oslo_config import cfg

GROUP = "drift"

# The stack tag that opts a stack in (heatclient: ``--tags``); a stack
# without it is never detected unless asked.
OPT_IN_TAG = "heat-lite:detect-drift"

opts = [
    cfg.IntOpt(
        "interval",
        default=0,
        min=0,
        help="Seconds between two drift detections of each stack tagged "
        "``%s`` (each stack's detection runs on one live engine, as the "
        "watchdog shares stacks). ``0`` runs none: detection only when "
        "asked (``detect_drift``)." % OPT_IN_TAG,
    ),
    cfg.IntOpt(
        "batch",
        default=20,
        min=1,
        help="Stacks one engine starts detecting per watchdog pass at most "
        "(the others wait for the next pass).",
    ),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)


def list_opts():
    return {GROUP: opts}
