"""Options of apps: where their sources may come from, and build bounds."""

from oslo_config import cfg

GROUP = "apps"

opts = [
    cfg.ListOpt(
        "allowed_sources",
        default=[],
        help="Git URLs an app may fetch from, as patterns "
        "``scheme://host[:port]/path`` with shell wildcards in host and "
        "path, for example ``https://git.example.com/*``, "
        "``ssh://git.example.com/*``, ``file:///srv/git/*``. Schemes: "
        "file, http, https, ssh, git. The "
        "engine fetches from inside the cloud, so the default is empty: no "
        "app can fetch anything until the operator lists where from.",
    ),
    cfg.ListOpt(
        "allowed_artifact_urls",
        default=[],
        help="Image URLs the artifact builder may import (the same pattern "
        "form as allowed_sources, http and https only). Empty: the "
        "artifact builder accepts no URL.",
    ),
    cfg.IntOpt(
        "fetch_timeout",
        default=300,
        min=1,
        help="Seconds a fetch of one commit (and its checkout) may take.",
    ),
    cfg.IntOpt(
        "max_source_size",
        default=1024,
        min=1,
        help="Size bound of a fetched repository and of its checked out "
        "tree, each, in MiB.",
    ),
    cfg.IntOpt(
        "build_timeout",
        default=1800,
        min=1,
        help="Seconds a builder may run for one build.",
    ),
    cfg.IntOpt(
        "max_image_size",
        default=10240,
        min=1,
        help="Size bound of a built or downloaded image, in MiB.",
    ),
    cfg.StrOpt(
        "scratch_dir",
        help="Directory under which each build gets a directory of its own "
        "for the checkout and the image. Default: the system's temporary "
        "directory.",
    ),
    cfg.StrOpt(
        "git_ssh_command",
        default="ssh -o BatchMode=yes",
        help="GIT_SSH_COMMAND for ssh:// sources (for example to name the "
        "engine's deploy key with -i and a known_hosts file).",
    ),
    cfg.StrOpt(
        "command_builder",
        default="",
        help="The command of the command builder, split like a shell "
        "would split it but run without one (for example "
        "'disk-image-create -o image vm ubuntu'). It runs in the build's "
        "scratch directory with HEAT_LITE_SOURCE (the checkout) and "
        "HEAT_LITE_OUTPUT (the file to write the image to) in its "
        "environment. Empty: the command builder is unavailable. Users "
        "never supply any part of it.",
    ),
    cfg.StrOpt(
        "command_builder_disk_format",
        default="qcow2",
        choices=["qcow2", "raw", "vmdk", "vdi", "vhd", "vhdx", "iso"],
        help="Disk format of what the command builder writes.",
    ),
    cfg.StrOpt(
        "builder_topic",
        default="heat_lite-builder",
        help="RPC topic of the builder workers (threads of heat-lite-engine "
        "of their own), so that a slow build never delays a graph node.",
    ),
    cfg.IntOpt(
        "max_builds_per_engine",
        default=2,
        min=1,
        help="Builds one engine runs at a time.",
    ),
    cfg.IntOpt(
        "max_builds_per_app",
        default=1,
        min=1,
        help="Builds of one app that run at a time, across all engines (one "
        "per branch at most in any case).",
    ),
    cfg.IntOpt(
        "max_gate_supersessions",
        default=2,
        min=0,
        help="A finished build's image is not deployed when a newer push "
        "of its branch waits (the newer one deploys instead), at most this "
        "many times in a row per branch: after that many finished images "
        "were dropped since the branch last deployed, the next finished one "
        "deploys although a newer push waits, so that a branch pushed to "
        "faster than it builds still deploys. 0 deploys every finished "
        "image.",
    ),
    cfg.StrOpt(
        "image_store",
        default="glance",
        help="Where builds put their images: a plugin of the "
        "heat_lite.image_stores entry point namespace.",
    ),
    cfg.FloatOpt(
        "build_poll_interval",
        default=1.0,
        min=0.01,
        help="Seconds between two looks of a build at its image upload and "
        "at its stack's operation.",
    ),
    cfg.IntOpt(
        "max_webhook_size",
        default=1048576,
        min=1024,
        help="Largest webhook delivery accepted, in bytes; a larger one "
        "is refused (HTTP 413).",
    ),
    cfg.FloatOpt(
        "webhook_rate",
        default=2.0,
        min=0,
        help="Webhook deliveries per second each app accepts, on average "
        "(a token bucket per app URL in each API process, so N API "
        "processes accept up to N times as many); a delivery past it is "
        "refused (HTTP 429 with Retry-After), forged ones included, before "
        "the engine is asked. 0: no limit.",
    ),
    cfg.IntOpt(
        "webhook_burst",
        default=20,
        min=1,
        help="Webhook deliveries an app accepts at once before "
        "webhook_rate applies (the token bucket's size).",
    ),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)


def list_opts():
    return {GROUP: opts}
