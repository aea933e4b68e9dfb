"""Which git URLs an app may name: the operator's ``[apps] allowed_sources``.

The engine fetches from inside the cloud's network, so an app's URL is a
request the engine makes on the user's behalf. Nothing is allowed unless
a pattern of the operator's allows it (the default list is empty: apps
cannot fetch at all until the operator says from where).

A pattern is ``scheme://host/path`` where host and path may hold shell
wildcards (``fnmatch``, case-insensitive for the host): for example
``https://git.example.com/*``, ``ssh://git.example.com/team-*/*``,
``file:///srv/git/*``. A URL matches when its scheme is the pattern's, its
host and port match (a pattern without a port allows only URLs without
one, that is the scheme's default port), and its path matches.
User names are not part of the match (``ssh://git@host/...`` matches
``ssh://host/*``); passwords in a URL are refused, so is anything a URL
parser and git might read differently: whitespace, control characters,
backslashes, ``..`` segments (also percent-encoded), scp-style
``host:path`` and helper transports (``ext::``, ``fd::``).
"""

import fnmatch
import re
from urllib import parse

from heat_lite.common import exception

SCHEMES = ("file", "http", "https", "ssh", "git")
_BAD_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
_MAX_URL_LENGTH = 2048


class SourceNotAllowed(exception.Invalid):
    msg_fmt = "Source %(url)s is not allowed: %(reason)s"


def _split(url, pattern=False):
    """Return (scheme, host[:port] lowercased, path) of a URL, or raise
    SourceNotAllowed for one that is ambiguous or not a plain URL. A
    ``pattern`` may have a wildcard port (``*``)."""
    if not isinstance(url, str) or not url:
        raise SourceNotAllowed(url=url, reason="not a URL")
    if len(url) > _MAX_URL_LENGTH or _BAD_CHARS.search(url):
        raise SourceNotAllowed(
            url=url[:80],
            reason="too long, or holds a space, control "
            "character or backslash",
        )
    if url.startswith("-"):
        raise SourceNotAllowed(url=url, reason="it starts with '-'")
    parts = parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or not url.lower().startswith(scheme + "://"):
        raise SourceNotAllowed(
            url=url, reason="the scheme must be one of %s" % ", ".join(SCHEMES)
        )
    if parts.password is not None:
        raise SourceNotAllowed(url=url, reason="it holds a password")
    if parts.query or parts.fragment:
        raise SourceNotAllowed(url=url, reason="it has a query or fragment")
    try:
        port = parts.port
    except ValueError:
        port = _wildcard_port(parts.netloc) if pattern else None
        if port is None:
            raise SourceNotAllowed(
                url=url, reason="its port is not a number"
            ) from None
    host = (parts.hostname or "").lower()
    wild = "*?" if pattern else ""
    if not re.fullmatch(
        r"[a-z0-9%s]([a-z0-9._%s-]*)|[0-9a-f:.]+" % (wild, wild), host or "x"
    ):
        # Also a host or user starting with '-': ssh would read an option.
        raise SourceNotAllowed(url=url, reason="its host name is not plain")
    if parts.username is not None and not re.fullmatch(
        r"[A-Za-z0-9_][A-Za-z0-9._-]*", parts.username
    ):
        raise SourceNotAllowed(url=url, reason="its user name is not plain")
    if scheme == "file":
        if host not in ("", "localhost"):
            raise SourceNotAllowed(url=url, reason="file URLs name no host")
        host = ""
    elif not host:
        raise SourceNotAllowed(url=url, reason="it names no host")
    if ":" in host:
        host = "[%s]" % host  # IPv6
    if port is not None:
        host = "%s:%s" % (host, port)
    path = parts.path or "/"
    decoded = parse.unquote(path)
    if any(seg in (".", "..") for seg in decoded.split("/")):
        raise SourceNotAllowed(url=url, reason="its path has '.' or '..'")
    return scheme, host, path


class InvalidSourcePattern(exception.HeatLiteException):
    """An operator's pattern that cannot be read: a configuration error,
    not the user's (500, and loud)."""

    msg_fmt = "[apps] %(option)s: invalid pattern %(pattern)r: %(reason)s"


def _pattern(pattern, option):
    try:
        return _split(pattern, pattern=True)
    except SourceNotAllowed as exc:
        raise InvalidSourcePattern(
            option=option, pattern=pattern, reason=exc.kwargs["reason"]
        ) from None


def _wildcard_port(netloc):
    port = netloc.rpartition(":")[2]
    return port if port and set(port) <= set("0123456789*?") else None


def check_patterns(patterns, option="allowed_sources"):
    """Raise InvalidSourcePattern unless every pattern is usable (the
    same rules as a URL, with wildcards allowed); for start-up checks."""
    for pattern in patterns:
        _pattern(pattern, option)


def check_source(url, allowed, schemes=SCHEMES, option="allowed_sources"):
    """Raise SourceNotAllowed unless ``url`` matches one of ``allowed``.

    :param url: the app's git URL (or an image URL, with ``schemes``
        narrowed to http and https).
    :param allowed: the operator's patterns (``[apps] allowed_sources``).
    :param option: the option's name, for messages.
    :returns: the URL's scheme, for ``protocol.allow``.
    """
    scheme, host, path = _split(url)
    if scheme not in schemes:
        raise SourceNotAllowed(
            url=url, reason="the scheme must be one of %s" % ", ".join(schemes)
        )
    if not allowed:
        raise SourceNotAllowed(
            url=url,
            reason="[apps] %s is empty: the operator allows none yet" % option,
        )
    for pattern in allowed:
        p_scheme, p_host, p_path = _pattern(pattern, option)
        if p_scheme != scheme:
            continue
        # Brackets in a host are IPv6's, never a wildcard class.
        p_host = "".join("[%s]" % c if c in "[]" else c for c in p_host)
        if fnmatch.fnmatchcase(host, p_host) and fnmatch.fnmatchcase(
            path, p_path
        ):
            return scheme
    raise SourceNotAllowed(
        url=url, reason="it matches none of [apps] %s" % option
    )
