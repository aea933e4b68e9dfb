"""oslo.config between test modules: what one module sets, the next one
does not see.

In-process tests share one global ``CONF``. A fixture that sets an
override and does not clear it (or fails before it does) changes every
module that runs after it on the same xdist worker, so a test passes or
fails depending on what ran before it. ``reset_after`` (an autouse,
module-scoped fixture in tests/conftest.py) takes a snapshot when a
module starts and puts every override and default back when it ends,
and unregisters the command-line options the module registered (the
``heat-lite-*`` commands' own, by ``cmd.common.parse_args``).

Options registered at import time stay: they belong to the modules that
registered them (heat_lite.conf, keystonemiddleware), which are not
imported again.
"""

_MISSING = object()


def snapshot(conf):
    """The overrides, defaults and command-line options of ``conf`` now."""
    values = {}
    for info, group in conf._all_opt_infos():
        values[_key(info, group)] = _values(info)
    cli = [(item["opt"], item["group"]) for item in conf._cli_opts]
    return values, cli


def restore(conf, snap):
    """Put ``conf`` back as ``snapshot`` found it.

    :returns: the options that had changed, as ``group.name`` strings
        (``DEFAULT.name`` for the default group), sorted.
    """
    values, cli = snap
    changed = set()
    for info, group in list(conf._all_opt_infos()):
        key = _key(info, group)
        override, default = values.get(key, (_MISSING, _MISSING))
        if _values(info) == (override, default):
            continue
        changed.add(key)
        name, group_name = key[1], key[0]
        if override is _MISSING:
            conf.clear_override(name, group_name)
        else:
            conf.set_override(name, override, group_name)
        if default is _MISSING:
            conf.clear_default(name, group_name)
        else:
            conf.set_default(name, default, group_name)
    # --config-file and --config-dir: ConfigOpts.__call__'s own.
    own = [id(opt) for opt in conf._config_opts]
    new_cli = [
        item
        for item in conf._cli_opts
        if id(item["opt"]) not in own
        and not any(
            item["opt"] is opt and item["group"] is group for opt, group in cli
        )
    ]
    if new_cli:
        # Unregistering needs the arguments unparsed; the next module
        # that needs a parsed CONF calls it again (they all do).
        conf.clear()
        for item in new_cli:
            conf.unregister_opt(item["opt"], item["group"])
            changed.add(_key(item, item["group"]))
    return sorted("%s.%s" % (g or "DEFAULT", n) for g, n in changed)


def reset_after(conf):
    """The body of a fixture: snapshot, ``yield``, restore."""
    snap = snapshot(conf)
    yield
    restore(conf, snap)


def _key(info, group):
    return (group.name if group is not None else None, info["opt"].dest)


def _values(info):
    return info.get("override", _MISSING), info.get("default", _MISSING)
