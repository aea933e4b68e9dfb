"""Fetching exactly one commit, over file://, git:// and smart HTTP."""

import functools
import http.server
import os
import socket

import pytest

from heat_lite.apps import process, source, sources
from tests.unit.apps.conftest import git, serve_http

MiB = 1024 * 1024


def fetch(url, commit, scratch, allowed, **kw):
    lines = []
    kw.setdefault("timeout", 60)
    kw.setdefault("max_size", 16 * MiB)
    co = source.fetch_commit(
        url, commit, str(scratch), allowed, log=lines.append, **kw
    )
    return co, lines


def read(co, name):
    with open(os.path.join(co.tree, name)) as f:
        return f.read()


def test_file_url_fetches_exactly_that_commit(repo, tmp_path, monkeypatch):
    # Nothing of the engine's own environment reaches git.
    monkeypatch.setenv("GIT_DIR", "/nonexistent")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'url.x.insteadof'='file'")
    url = "file://" + repo.path
    co, _ = fetch(url, repo.first, tmp_path / "b", ["file://%s/*" % tmp_path])
    assert co.commit == repo.first
    assert read(co, "src/app.py") == "print(1)\n"
    assert sorted(os.listdir(co.tree)) == ["README", "src"]  # no .git
    assert co.size == len("first\n") + len("print(1)\n")
    shallow = git(os.path.join(tmp_path, "b", "git"), "rev-list", "--all")
    assert shallow.split() == [repo.first]  # one commit, no history


@pytest.mark.parametrize("which", ["second", "first"])
def test_git_daemon(repo, git_daemon, tmp_path, which):
    """The tip, and an older commit by its name (protocol v2)."""
    co, _ = fetch(
        git_daemon + "/app", getattr(repo, which), tmp_path / "b",
        ["git://127.0.0.1:*/*"],
    )  # fmt: skip
    expected = "print(2)\n" if which == "second" else "print(1)\n"
    assert read(co, "src/app.py") == expected


def test_smart_http(repo, http_backend, tmp_path):
    url, _ = http_backend
    co, _ = fetch(
        url + "/app", repo.second, tmp_path / "b",
        ["http://127.0.0.1:*/*"], ref="refs/heads/main",
    )  # fmt: skip
    assert read(co, "src/app.py") == "print(2)\n"


def test_smart_http_older_commit(repo, http_backend, tmp_path):
    """Protocol v2 serves any commit by name; v0 serves advertised tips
    only, so the pushed ref is asked for, and it has moved on: that
    commit is not built (a newer push builds the newer one)."""
    url, v2 = http_backend
    args = (url + "/app", repo.first, tmp_path / "b", ["http://127.0.0.1:*/*"])
    if v2:
        co, _ = fetch(*args, ref="refs/heads/main")
        assert read(co, "src/app.py") == "print(1)\n"
    else:
        with pytest.raises(source.CommitNotFetched, match="now points at"):
            fetch(*args, ref="refs/heads/main")


def test_dumb_http(repo, tmp_path):
    """A static file server: no shallow fetch, so the commit comes with
    its history, and is still the one checked out."""
    git(repo.path, "update-server-info")
    served = str(tmp_path / "served")
    handler = functools.partial(_Quiet, directory=served)
    gen = serve_http(handler)
    url = next(gen)
    try:
        co, lines = fetch(
            url + "/app/.git", repo.first, tmp_path / "b",
            ["http://127.0.0.1:*/*"],
        )  # fmt: skip
    finally:
        next(gen, None)
    assert read(co, "src/app.py") == "print(1)\n"
    assert any("dumb HTTP server" in line for line in lines)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_a_tree_is_not_a_commit(repo, tmp_path):
    tree = git(repo.path, "rev-parse", "HEAD^{tree}")
    with pytest.raises(source.CommitNotFetched, match="not a commit"):
        fetch(
            "file://" + repo.path, tree, tmp_path / "b",
            ["file://%s/*" % tmp_path],
        )  # fmt: skip


FAKE_SSH = """#!/bin/sh
# Stands in for ssh: records its arguments, then runs the remote command
# (its last argument) here, as sshd would run it on the server.
[ "$1" = "-G" ] && exit 1  # git probes for OpenSSH; say "not it"
printf '%s\\n' "$@" > "$(dirname "$0")/ssh-args"
for last; do :; done
exec sh -c "$last"
"""


def test_ssh_runs_the_operators_command(repo, tmp_path):
    fake = tmp_path / "fake-ssh"
    fake.write_text(FAKE_SSH)
    fake.chmod(0o755)
    url = "ssh://git@git.example.com" + repo.path
    co, _ = fetch(
        url, repo.second, tmp_path / "b", ["ssh://git.example.com/*"],
        ssh_command=str(fake),
    )  # fmt: skip
    assert read(co, "src/app.py") == "print(2)\n"
    args = (tmp_path / "ssh-args").read_text().split("\n")
    assert "git@git.example.com" in args
    assert any(a.startswith("git-upload-pack '%s'" % repo.path) for a in args)


class _Redirect(http.server.BaseHTTPRequestHandler):
    target = None

    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", self.target + self.path)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_http_redirects_are_not_followed(repo, http_backend, tmp_path):
    target, _ = http_backend
    handler = type("H", (_Redirect,), {"target": target})
    gen = serve_http(handler)
    url = next(gen)
    try:
        with pytest.raises(source.CommitNotFetched):
            fetch(
                url + "/app", repo.second, tmp_path / "b",
                ["http://127.0.0.1:*/*"],
            )  # fmt: skip
    finally:
        next(gen, None)


def test_url_is_checked_before_anything_runs(repo, tmp_path):
    scratch = tmp_path / "b"
    scratch.mkdir()
    with pytest.raises(sources.SourceNotAllowed):
        fetch("file://" + repo.path, repo.first, scratch, [])
    with pytest.raises(sources.SourceNotAllowed):
        fetch(
            "file://" + repo.path, repo.first, scratch,
            ["file:///srv/git/*"],
        )  # fmt: skip
    assert os.listdir(scratch) == []


@pytest.mark.parametrize(
    "commit, ref",
    [
        ("--upload-pack=touch /tmp/x", None),
        ("HEAD", None),
        ("main", None),
        (None, None),
        ("a" * 40, "--upload-pack=x"),
        ("a" * 40, "refs/heads/a..b"),
        ("a" * 40, "main"),
    ],
)
def test_commit_and_ref_are_checked(repo, tmp_path, commit, ref):
    scratch = tmp_path / "b"
    scratch.mkdir()
    with pytest.raises(source.InvalidCommit):
        fetch(
            "file://" + repo.path, commit, scratch,
            ["file://%s/*" % tmp_path], ref=ref,
        )  # fmt: skip
    assert os.listdir(scratch) == []


def test_unknown_commit(repo, tmp_path):
    with pytest.raises(source.CommitNotFetched):
        fetch(
            "file://" + repo.path, "b" * 40, tmp_path / "b",
            ["file://%s/*" % tmp_path],
        )  # fmt: skip


def test_tree_larger_than_the_bound(repo, tmp_path):
    big = repo.commit({"blob": os.urandom(256 * 1024)})
    with pytest.raises((source.SourceTooLarge, process.CommandTooLarge)):
        fetch(
            "file://" + repo.path, big, tmp_path / "b",
            ["file://%s/*" % tmp_path], max_size=100 * 1024,
        )  # fmt: skip
    assert not os.listdir(tmp_path / "b" / "tree")


def test_tree_bound_checked_before_checkout(repo, tmp_path):
    """Compressible content: a small pack, a large tree."""
    big = repo.commit({"zeros": b"\0" * (2 * MiB)})
    with pytest.raises(source.SourceTooLarge):
        fetch(
            "file://" + repo.path, big, tmp_path / "b",
            ["file://%s/*" % tmp_path], max_size=MiB,
        )  # fmt: skip
    assert not os.listdir(tmp_path / "b" / "tree")


def test_a_server_that_never_answers_times_out(repo, tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        with pytest.raises(process.CommandTimedOut):
            fetch(
                "git://127.0.0.1:%d/app" % port, repo.first, tmp_path / "b",
                ["git://127.0.0.1:*/*"], timeout=2,
            )  # fmt: skip


def test_protocols_other_than_the_urls_are_off(repo, tmp_path):
    """A submodule or alternate of another scheme is never followed: the
    fetch runs with protocol.allow=never but for the URL's scheme."""
    scratch = tmp_path / "b"
    co, _ = fetch(
        "file://" + repo.path, repo.second, scratch, ["file://%s/*" % tmp_path]
    )
    g = source._Git(
        str(scratch / "git"), "git", str(scratch), 1e12, print, None
    )
    with pytest.raises(process.CommandFailed):
        # Only git:// is allowed to this runner: file:// is refused.
        g("fetch", "--", "file://" + repo.path, repo.second)
