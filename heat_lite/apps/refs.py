"""The shape of git object names and ref names, checked without git.

A webhook is answered before anything runs a process, so its ``ref`` and
commit are checked here in pure Python; ``source`` checks the ref again
with ``git check-ref-format`` before handing it to git.
"""

import re

# SHA-1 (40) or SHA-256 (64) object names, lowercase as git prints them.
_COMMIT = re.compile(r"\A(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
_ZERO = re.compile(r"\A0+\Z")
BRANCH_PREFIX = "refs/heads/"
MAX_REF_LENGTH = 1024


def is_commit(value):
    """True for a full lowercase object name that is not all zeros."""
    return (
        isinstance(value, str)
        and bool(_COMMIT.match(value))
        and not _ZERO.match(value)
    )


def is_zero_commit(value):
    """True for the all-zeros name git servers send for a missing side
    of a push (``after`` of a deleted branch, ``before`` of a new one)."""
    return (
        isinstance(value, str)
        and bool(_COMMIT.match(value))
        and bool(_ZERO.match(value))
    )


def is_valid_ref(ref):
    """Whether ``ref`` is a full ref name git accepts.

    The rules of ``git check-ref-format`` (without --allow-onelevel):
    at least two components, none starting with '.' or ending with
    '.lock', no '..', no control character, space, '~', '^', ':', '?',
    '*', '[' or '\\', no '@{', not '@' alone, no trailing '/' or '.', no
    '//'. A ref starting with '-' is refused too: it would read as an
    option on a command line.
    """
    if not isinstance(ref, str) or not ref or len(ref) > MAX_REF_LENGTH:
        return False
    if ref.startswith(("-", "/")) or ref.endswith(("/", ".")):
        return False
    if ref == "@" or "@{" in ref or ".." in ref or "//" in ref:
        return False
    if any(ord(c) < 0x20 or ord(c) == 0x7F or c in " ~^:?*[\\" for c in ref):
        return False
    parts = ref.split("/")
    if len(parts) < 2:
        return False
    return all(
        p and not p.startswith(".") and not p.endswith(".lock") for p in parts
    )


def branch_of(ref):
    """The branch name of ``refs/heads/<name>``, or None for other refs."""
    if ref.startswith(BRANCH_PREFIX) and len(ref) > len(BRANCH_PREFIX):
        return ref[len(BRANCH_PREFIX) :]
    return None
