"""Limits on what users may submit ([DEFAULT]), with Heat's defaults."""

from oslo_config import cfg

opts = [
    cfg.IntOpt(
        "max_template_size",
        default=524288,
        min=1,
        help="Maximum size of a template, in bytes.",
    ),
    cfg.IntOpt(
        "max_json_body_size",
        default=1048576,
        min=1,
        help="Maximum size of a JSON request body, in bytes.",
    ),
    cfg.IntOpt(
        "max_resources_per_stack",
        default=1000,
        min=-1,
        help="Maximum number of resources in a stack; -1 means unlimited.",
    ),
    cfg.IntOpt(
        "max_nested_stack_depth",
        default=5,
        min=0,
        help="Maximum depth of nested stacks.",
    ),
    cfg.IntOpt(
        "max_stacks_per_tenant",
        default=512,
        min=-1,
        help="Maximum number of stacks a project may own; -1 means "
        "unlimited. Not enforced for admins.",
    ),
    cfg.IntOpt(
        "max_events_per_stack",
        default=1000,
        min=0,
        help="Events kept per stack: when a stack operation ends with "
        "more, its oldest events are deleted (in multiples of "
        "event_purge_batch_size). 0 keeps all.",
    ),
    cfg.IntOpt(
        "event_purge_batch_size",
        default=200,
        min=1,
        help="Number of events deleted at a time when a stack has more "
        "than max_events_per_stack: its event count falls back to between "
        "max_events_per_stack minus this and max_events_per_stack.",
    ),
    cfg.IntOpt(
        "max_signal_size",
        default=8192,
        min=64,
        help="Maximum size of a resource signal (the JSON of its body: a "
        "wait condition handle's status, reason, data and id), in bytes; a "
        "larger one is refused (HTTP 413).",
    ),
    cfg.IntOpt(
        "max_signals_per_handle",
        default=1000,
        min=1,
        help="Maximum number of distinct signal ids a wait condition "
        "handle keeps: once it holds this many, a signal with a new id is "
        "refused (HTTP 400) and one with a known id still replaces it. A "
        "wait condition may not wait for more (its count).",
    ),
]


def register_opts(conf):
    conf.register_opts(opts)


def list_opts():
    return {"DEFAULT": opts}
