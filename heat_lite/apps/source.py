"""Fetch exactly one commit of an app's git repository into a scratch dir.

``fetch_commit()`` checks the URL against the operator's allowed sources
before anything runs, then: ``git init`` of an empty repository (no
templates, so no hooks), ``git fetch --depth 1 <url> <commit>`` and a
checkout of that commit into a tree of its own (``<scratch>/tree``, with
the repository beside it in ``<scratch>/git``, so a builder sees the
files of the commit and no ``.git``).

Every git command is an argv list; the URL, commit and ref are checked
first (none may start with '-', the ref must pass ``git check-ref-format``,
the commit must be a full object name) and stand after ``--`` where git
takes one (``check-ref-format`` takes no ``--``: the pure check refused a
leading dash already). The environment is built whole: no inherited
``GIT_*``, no system or global git config, no terminal prompt, ssh in batch
mode;
``protocol.allow=never`` but for the URL's own scheme, and HTTP redirects
are not followed (a permitted host could redirect into the engine's
network). The fetch has a deadline and the scratch directory a size bound,
the tree's size is checked from the commit's listing before it is written.

A server that refuses to serve a commit by its name (an old git without
protocol v2, ``uploadpack.allowReachableSHA1InWant`` off) is asked for the
pushed ref instead, which must then point at that very commit: a branch
that moved on since the push is an error (a newer push builds it).
"""

import dataclasses
import os
import time

from heat_lite.apps import process, refs, sources
from heat_lite.common import exception

DEFAULT_SSH_COMMAND = "ssh -o BatchMode=yes"


class InvalidCommit(exception.Invalid):
    msg_fmt = "%(message)s"


class CommitNotFetched(exception.HeatLiteException):
    msg_fmt = "Commit %(commit)s could not be fetched from %(url)s: %(reason)s"


class SourceTooLarge(exception.HeatLiteException):
    msg_fmt = (
        "The tree of commit %(commit)s holds %(size)d bytes, more than "
        "%(limit)d"
    )


@dataclasses.dataclass(frozen=True)
class Checkout:
    """The files of one commit, checked out under ``tree``."""

    tree: str
    commit: str
    size: int


class _Git:
    """Runs git against one repository with one deadline."""

    def __init__(self, git_dir, scheme, scratch, deadline, log, ssh_command):
        self.git_dir = git_dir
        self.deadline = deadline
        self.log = log
        self.scratch = scratch
        self.config = [
            "-c", "protocol.allow=never",
            "-c", "protocol.%s.allow=always" % scheme,
            "-c", "http.followRedirects=false",
            "-c", "core.hooksPath=/dev/null",
            "-c", "submodule.recurse=false",
        ]  # fmt: skip
        self.env = process.base_env(
            HOME=scratch,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_SSH_COMMAND=ssh_command or DEFAULT_SSH_COMMAND,
        )

    def __call__(self, *args, what=None, log=None, limit=None):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise process.CommandTimedOut(what=what or "git", timeout=0)
        process.run(
            ["git", *self.config, "--git-dir", self.git_dir, *args],
            what=what or "git %s" % args[0],
            cwd=self.scratch,
            env=self.env,
            timeout=max(1, int(remaining + 0.999)),
            log=log or self.log,
            watch=self.scratch if limit else None,
            limit=limit,
        )

    def output(self, *args):
        lines = []
        self(*args, log=lines.append)
        return lines


def check_ref(ref, env=None):
    """Raise InvalidCommit unless ``ref`` is a full ref name (both the
    pure check and ``git check-ref-format`` must agree)."""
    if not refs.is_valid_ref(ref):
        raise InvalidCommit(message="%r is not a valid ref name" % (ref,))
    try:
        process.run(
            ["git", "check-ref-format", ref],
            what="git check-ref-format",
            cwd="/",
            env=env or process.base_env(GIT_CONFIG_NOSYSTEM="1"),
            timeout=30,
            log=lambda line: None,
        )
    except process.CommandFailed:
        raise InvalidCommit(
            message="%r is not a valid ref name" % (ref,)
        ) from None


def fetch_commit(
    url,
    commit,
    scratch_dir,
    allowed,
    timeout,
    max_size,
    log,
    ref=None,
    ssh_command=None,
):
    """Fetch ``commit`` of ``url`` and check it out.

    :param url: the app's git URL, checked against ``allowed`` first.
    :param commit: the full object name (40 or 64 lowercase hex digits).
    :param scratch_dir: an empty directory of this build's; the checkout
        lands in ``<scratch_dir>/tree``.
    :param allowed: ``[apps] allowed_sources``.
    :param timeout: seconds for the whole fetch and checkout.
    :param max_size: bytes the repository and the tree may take each.
    :param log: called with each line git prints.
    :param ref: the pushed ref, asked for when the server will not serve
        a bare commit name.
    :param ssh_command: GIT_SSH_COMMAND (the operator's); default batch
        mode ssh.
    :returns: Checkout.
    :raises SourceNotAllowed, InvalidCommit, CommitNotFetched,
        SourceTooLarge, process.CommandTimedOut, process.CommandTooLarge:
    """
    scheme = sources.check_source(url, allowed)
    if not refs.is_commit(commit):
        raise InvalidCommit(
            message="%r is not a 40 or 64 digit lowercase commit id"
            % (commit,)
        )
    if ref is not None:
        check_ref(ref)
    scratch_dir = os.path.abspath(scratch_dir)
    git_dir = os.path.join(scratch_dir, "git")
    tree = os.path.join(scratch_dir, "tree")
    os.makedirs(tree)
    git = _Git(
        git_dir,
        scheme,
        scratch_dir,
        time.monotonic() + timeout,
        log,
        ssh_command,
    )
    fmt = "sha1" if len(commit) == 40 else "sha256"
    git(
        "init",
        "-q",
        "--bare",
        "--template=",
        "--object-format=" + fmt,
        what="git init",
    )
    _fetch(git, url, commit, ref, max_size)
    size = _tree_size(git, commit)
    if size > max_size:
        raise SourceTooLarge(commit=commit, size=size, limit=max_size)
    git(
        "--work-tree", tree, "checkout", "-q", "-f", "--detach", commit,
        what="git checkout",
    )  # fmt: skip
    return Checkout(tree=tree, commit=commit, size=size)


_FETCH = ("fetch", "-q", "--no-tags", "--no-recurse-submodules")
# What git says (LANG=C) when a server has no smart HTTP: such a server
# serves no shallow fetch, so the commit is fetched with its history.
_DUMB_HTTP = "dumb http transport does not support shallow"
_BOUNDS = (process.CommandTimedOut, process.CommandTooLarge)


def _fetch_one(git, url, wanted, max_size):
    dumb = []

    def log(line):
        if _DUMB_HTTP in line:
            dumb.append(True)
        git.log(line)

    try:
        git(*_FETCH, "--depth", "1", "--", url, wanted, what="git fetch",
            log=log, limit=max_size)  # fmt: skip
    except _BOUNDS:
        raise
    except process.CommandFailed:
        if not dumb:
            raise
        git.log("dumb HTTP server: fetching %s with its history" % wanted)
        git(*_FETCH, "--", url, wanted, what="git fetch", limit=max_size)


def _fetch(git, url, commit, ref, max_size):
    try:
        _fetch_one(git, url, commit, max_size)
        return _check_is_commit(git, url, commit)
    except _BOUNDS:
        raise
    except process.CommandFailed as exc:
        if ref is None:
            raise CommitNotFetched(
                commit=commit, url=url, reason=str(exc)
            ) from exc
    git.log("the server did not serve %s by name; fetching %s" % (commit, ref))
    try:
        _fetch_one(git, url, ref, max_size)
        head = git.output("rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}")
    except _BOUNDS:
        raise
    except process.CommandFailed as exc:
        raise CommitNotFetched(
            commit=commit, url=url, reason=str(exc)
        ) from exc
    if head != [commit]:
        raise CommitNotFetched(
            commit=commit,
            url=url,
            reason="%s now points at %s"
            % (ref, head[0] if head else "nothing"),
        )


def _check_is_commit(git, url, commit):
    """A name fetched may be a tree's or a blob's: only commits build."""
    try:
        git("cat-file", "-e", commit + "^{commit}", what="git cat-file")
    except _BOUNDS:
        raise
    except process.CommandFailed:
        raise CommitNotFetched(
            commit=commit, url=url, reason="it is not a commit"
        ) from None


def _tree_size(git, commit):
    """Sum of the blob sizes of ``commit``'s tree (from ``ls-tree -l``)."""
    total = 0
    for line in git.output("ls-tree", "-r", "-l", "--full-tree", commit):
        fields = line.split(None, 4)
        if len(fields) >= 4 and fields[3].isdigit():
            total += int(fields[3])
    return total
