"""Which entries of a server's ``networks`` a change leaves alone (pure).

An entry is compared by its facts: ``port``, ``network``, ``fixed_ip``
and ``subnet`` (IDs, resolved by ``server_networks``) and ``tag``. First
each old entry is paired with the interface it made, so that it knows
all four facts of its port; then each new entry is paired with an old
entry whose facts include every fact the new entry gives. A paired
entry keeps its port: swapping ``network`` for the ``subnet`` of the
same port, adding the port's own fixed IP or naming the port itself
changes nothing on the server (as Heat). The most specific entries are
paired first (a port, then a fixed IP, then the most facts in common),
so that a vaguer entry cannot take the interface a specific one needs.
"""

FACTS = ("port", "network", "fixed_ip", "subnet")


def interface_facts(iface):
    """The facts of a Nova interface (its first fixed IP's)."""
    ips = iface.fixed_ips or [{}]
    return {
        "port": iface.port_id,
        "network": iface.net_id,
        "fixed_ip": ips[0].get("ip_address"),
        "subnet": ips[0].get("subnet_id"),
    }


def _given(entry):
    return {k: entry[k] for k in FACTS if entry.get(k) is not None}


def _rank(entry):
    """Most specific first: a port, then a fixed IP, then the most
    facts given."""
    given = _given(entry)
    return ("port" not in given, "fixed_ip" not in given, -len(given))


def _fits(given, candidate):
    return all(candidate.get(k) == v for k, v in given.items())


def _best(given, candidates):
    """The candidate index holding all of ``given``; ties go to the
    first (the order the server has them in)."""
    for i, candidate in enumerate(candidates):
        if candidate is not None and _fits(given, candidate):
            return i
    return None


def pair(entries, candidates, same=None):
    """[index of the paired candidate or None] per entry; each candidate
    is paired at most once, the most specific entries first. ``same``
    (entry, candidate) -> bool adds a condition besides the facts."""
    left = list(candidates)
    result = [None] * len(entries)
    for i in sorted(range(len(entries)), key=lambda i: _rank(entries[i])):
        given = _given(entries[i])
        fit = [
            c
            if c is not None and (same is None or same(entries[i], c))
            else None
            for c in left
        ]
        j = _best(given, fit)
        if j is not None:
            result[i] = j
            left[j] = None
    return result


def match(old, new, interfaces):
    """Pair ``old`` and ``new`` entries (resolved dicts) over the
    server's ``interfaces`` (their ``interface_facts``).

    Returns (kept, detach, attach): ``kept`` the port IDs of the new
    entries that keep one (None where the entry needs a new one),
    ``detach`` the port IDs of the old entries no new entry keeps (in
    order), ``attach`` the indexes of the new entries to attach.
    """
    on = pair(old, interfaces)
    known = [
        dict(interfaces[j], tag=o.get("tag")) if j is not None else None
        for o, j in zip(old, on, strict=True)
    ]
    to_old = pair(new, known, same=lambda n, c: n.get("tag") == c["tag"])
    kept = [known[j]["port"] if j is not None else None for j in to_old]
    paired = {j for j in to_old if j is not None}
    detach = [
        known[j]["port"]
        for j in range(len(old))
        if j not in paired and known[j] is not None
    ]
    attach = [i for i, j in enumerate(to_old) if j is None]
    return kept, detach, attach
