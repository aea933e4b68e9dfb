"""The command builder runs the operator's command, bounded."""

import os
import shlex
import sys

import pytest

from heat_lite.builders import base, command
from tests.unit.builders.conftest import run_builder


def build(conf, checkout, scratch):
    return run_builder(command.CommandBuilder(conf), checkout, scratch, {})


def script(tmp_path, text):
    """The operator's command: a script and its arguments."""
    path = tmp_path / "build-image"
    path.write_text("#!/bin/sh\nset -e\n" + text)
    path.chmod(0o755)
    return shlex.join([str(path), "--arg with space"])


def test_the_command_writes_the_image(make_conf, checkout, scratch, tmp_path):
    cmd = script(
        tmp_path,
        'echo "building from $HEAT_LITE_SOURCE with $1"\n'
        'tar -C "$HEAT_LITE_SOURCE" -cf "$HEAT_LITE_OUTPUT" .\n'
        "echo cwd=$(pwd) tmp=$TMPDIR\n"
        "env | grep -c . | sed 's/^/vars=/'\n",
    )
    conf = make_conf(command_builder=cmd, command_builder_disk_format="raw")
    art, lines = build(conf, checkout, scratch)
    assert art.path == os.path.join(scratch, "output", "image")
    assert (art.disk_format, art.container_format) == ("raw", "bare")
    assert (art.size, art.sha256) == base.file_digest(art.path)
    assert "building from %s with --arg with space" % checkout in lines
    assert "cwd=%s tmp=%s/tmp" % (scratch, scratch) in lines
    # PATH, LANG, LC_ALL, HOME, TMPDIR, the two HEAT_LITE_ (and PWD,
    # SHLVL, _ that sh adds): nothing of the engine's environment.
    assert int(lines[-1].split("=")[1]) <= 10


def test_users_cannot_pass_options(make_conf):
    builder = command.CommandBuilder(make_conf(command_builder="true"))
    with pytest.raises(base.InvalidBuildOptions):
        builder.validate_options({"argv": ["rm", "-rf", "/"]})


def test_unset_command_is_unavailable(make_conf, checkout, scratch):
    with pytest.raises(base.BuildFailed, match="command_builder is not set"):
        build(make_conf(), checkout, scratch)


@pytest.mark.parametrize(
    "text, timeout, message",
    [
        ("echo oops >&2\nexit 4\n", 30, "exit status 4"),
        ("true\n", 30, "wrote no"),
        ('ln -s /etc/passwd "$HEAT_LITE_OUTPUT"\n', 30, "not a regular file"),
        ("sleep 60\n", 1, "did not finish within 1 s"),
    ],
    ids=["fails", "no-output", "symlink-output", "timeout"],
)
def test_failed_builds(
    make_conf, checkout, scratch, tmp_path, text, timeout, message
):
    conf = make_conf(
        command_builder=script(tmp_path, text), build_timeout=timeout
    )
    with pytest.raises(base.BuildFailed, match=message):
        build(conf, checkout, scratch)


def test_output_larger_than_the_bound(make_conf, checkout, scratch, tmp_path):
    cmd = shlex.join(
        [
            sys.executable,
            "-c",
            "import os, time\n"
            "with open(os.environ['HEAT_LITE_OUTPUT'], 'wb') as f:\n"
            "    for _ in range(200):\n"
            "        f.write(os.urandom(1 << 20))\n"
            "        f.flush()\n"
            "        time.sleep(0.02)\n",
        ]
    )
    conf = make_conf(command_builder=cmd, max_image_size=2)
    with pytest.raises(base.BuildFailed, match="wrote more than"):
        build(conf, checkout, scratch)
    assert os.path.getsize(os.path.join(scratch, "output", "image")) < (
        100 << 20
    )
