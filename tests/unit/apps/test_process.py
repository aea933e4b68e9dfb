"""Bounded commands: deadline, disk bound, streamed log, given env."""

import os
import time

import pytest

from harness import polling
from heat_lite.apps import process


def run(argv, tmp_path, **kw):
    lines = []
    kw.setdefault("timeout", 30)
    process.run(
        argv, what="test", cwd=str(tmp_path),
        env=kw.pop("env", process.base_env()), log=lines.append, **kw,
    )  # fmt: skip
    return lines


def test_output_is_logged_line_by_line(tmp_path):
    lines = run(["sh", "-c", "echo one; echo two >&2; printf three"], tmp_path)
    assert lines == ["one", "two", "three"]


def test_environment_is_only_what_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/leaked")
    lines = run(["env"], tmp_path, env=process.base_env(ONLY="1"))
    names = sorted(line.split("=", 1)[0] for line in lines)
    assert names == ["LANG", "LC_ALL", "ONLY", "PATH"]


def test_failure_names_the_status(tmp_path):
    with pytest.raises(process.CommandFailed, match="exit status 3"):
        run(["sh", "-c", "exit 3"], tmp_path)


def test_missing_program(tmp_path):
    with pytest.raises(process.CommandFailed):
        run(["no-such-program-here"], tmp_path)


def test_argv_must_be_a_list(tmp_path):
    with pytest.raises(TypeError):
        run("echo hi", tmp_path)


def test_timeout_kills_the_whole_group(tmp_path):
    marker = tmp_path / "late"
    started = time.monotonic()
    with pytest.raises(process.CommandTimedOut):
        # The child outlives its parent unless the group is killed.
        run(
            ["sh", "-c", "(sleep 3; touch %s) & sleep 30" % marker],
            tmp_path, timeout=1,
        )  # fmt: skip
    assert time.monotonic() - started < 10
    # The child would have touched it 3 s after the start.
    polling.stays(lambda: not marker.exists(), 4, "the child killed too")


def test_disk_bound_kills_a_writer(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(process.CommandTooLarge):
        run(
            ["sh", "-c", "while :; do head -c 65536 /dev/zero >> %s/f; "
             "sleep 0.01; done" % out],
            tmp_path, watch=str(out), limit=1024 * 1024,
        )  # fmt: skip
    assert os.path.getsize(out / "f") < 64 * 1024 * 1024


def test_tree_size_counts_sparse_files_by_blocks(tmp_path):
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(1 << 30)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_bytes(b"x" * 10000)
    assert 10000 <= process.tree_size(str(tmp_path)) < 1 << 20


def test_lines_reach_the_log_while_the_command_runs(tmp_path):
    """The build log is served while a build runs: the command waits for
    a file that the log callback creates on seeing its first line."""
    go = tmp_path / "go"
    lines = []

    def log(line):
        lines.append(line)
        if line == "waiting":
            go.touch()

    process.run(
        ["sh", "-c", "echo waiting; while [ ! -e %s ]; do sleep 0.05; done;"
         " echo done" % go],
        what="test", cwd=str(tmp_path), env=process.base_env(),
        timeout=20, log=log,
    )  # fmt: skip
    assert lines == ["waiting", "done"]


def test_long_lines_are_cut_not_buffered(tmp_path):
    lines = run(["sh", "-c", "head -c 10000 /dev/zero | tr '\\0' x"], tmp_path)
    assert "".join(lines) == "x" * 10000
    assert max(len(line) for line in lines) <= 4096


def test_a_failing_log_does_not_stall_the_command(tmp_path):
    def log(line):
        raise OSError("log store is down")

    process.run(
        ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' '\\n'"],
        what="test", cwd=str(tmp_path), env=process.base_env(),
        timeout=20, log=log,
    )  # fmt: skip


class _Stop(Exception):
    pass


def test_a_check_that_raises_kills_the_group_and_is_raised(tmp_path):
    marker, started = tmp_path / "late", tmp_path / "started"

    def check():
        if started.exists():  # (the command is running: stop it now)
            raise _Stop()

    with pytest.raises(_Stop):
        run(
            ["sh", "-c", "touch %s; (sleep 3; touch %s) & sleep 30"
             % (started, marker)],
            tmp_path, check=check,
        )  # fmt: skip
    polling.stays(lambda: not marker.exists(), 4, "the child killed too")
