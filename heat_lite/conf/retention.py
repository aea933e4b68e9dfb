"""Options of image retention: which images heat_lite built stay, and how
the periodic pass retires the rest (doc/specs/image_retention.md)."""

from oslo_config import cfg

GROUP = "retention"

MODES = ("report", "hide", "delete")

opts = [
    cfg.IntOpt(
        "interval",
        default=300,
        min=0,
        help="Seconds between two retention passes (one live engine runs "
        "each). ``0`` runs none.",
    ),
    cfg.IntOpt(
        "keep_last",
        default=3,
        min=0,
        help="Default of an app's ``retention.keep_last``: how many of the "
        "newest deployed images of each of its branches stay even when no "
        "stack names them any more.",
    ),
    cfg.IntOpt(
        "grace",
        default=86400,
        min=0,
        help="Default of an app's ``retention.grace``: seconds an unneeded "
        "image stays hidden in Glance before it is deleted.",
    ),
    cfg.StrOpt(
        "mode",
        default="delete",
        choices=MODES,
        help="Default of an app's ``retention.mode``: ``report`` only "
        "records which images are unneeded, ``hide`` hides them in Glance "
        "(``os_hidden``), ``delete`` hides them and deletes them after the "
        "grace. Only images heat_lite built (property ``heat_lite_build``) "
        "are ever touched.",
    ),
    cfg.IntOpt(
        "page_size",
        default=500,
        min=1,
        help="Images one pass reads and decides at a time (its memory bound).",
    ),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)


def list_opts():
    return {GROUP: opts}
