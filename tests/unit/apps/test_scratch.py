"""Build directories: private, removed after the build, swept if left."""

import os
import stat
import tempfile
import time

import pytest

from heat_lite.apps import scratch


def test_build_dir_is_private_and_removed(tmp_path):
    root = str(tmp_path / "builds")
    with scratch.build_dir(root, "b-1/../x") as path:
        assert os.path.dirname(path) == root
        assert os.path.basename(path).startswith("heat-lite-build-b-1_.._x-")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
        os.makedirs(os.path.join(path, "tree", "src"))
    assert not os.path.exists(path)


def test_build_dir_is_removed_on_failure(tmp_path):
    with pytest.raises(RuntimeError):
        with scratch.build_dir(str(tmp_path), "b") as path:
            raise RuntimeError("build failed")
    assert not os.path.exists(path)


def test_two_builds_never_share_a_directory(tmp_path):
    with scratch.build_dir(str(tmp_path), "b") as one:
        with scratch.build_dir(str(tmp_path), "b") as two:
            assert one != two


def test_sweep_removes_only_old_build_dirs(tmp_path):
    old = tmp_path / "heat-lite-build-dead-abc"
    (old / "tree").mkdir(parents=True)
    new = tmp_path / "heat-lite-build-live-def"
    new.mkdir()
    other = tmp_path / "not-ours"
    other.mkdir()
    past = time.time() - 7200
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    assert scratch.sweep(str(tmp_path), 3600) == [str(old)]
    assert sorted(os.listdir(tmp_path)) == [new.name, other.name]


def test_sweep_builds_removes_the_dirs_of_its_builds_not_running(tmp_path):
    """Only the directories of builds the deployment knows and does not
    run go: a running build's is in use, and a build the database does
    not know is another deployment's (a CI run lost a build's image to
    another deployment's engine starting on the same host)."""
    root = str(tmp_path)
    with scratch.build_dir(root, "11111111-aaaa-bbbb-cccc-000000000001"):
        pass  # (removed at its end)
    dirs = {}
    builds = ("11111111-aaaa-bbbb-cccc-000000000001", "running-2", "theirs")
    for build in builds:
        path = tempfile.mkdtemp(prefix=scratch.PREFIX + build + "-", dir=root)
        os.makedirs(os.path.join(path, "src"))
        dirs[build] = path
    other = tmp_path / "not-ours"
    other.mkdir()
    asked = []

    def idle(ids):
        asked.append(ids)
        return {"11111111-aaaa-bbbb-cccc-000000000001"}

    removed = scratch.sweep_builds(root, idle)
    assert asked == [sorted(dirs)]  # the build ids, one question
    assert removed == [dirs["11111111-aaaa-bbbb-cccc-000000000001"]]
    assert sorted(os.listdir(root)) == sorted(
        [
            os.path.basename(dirs["running-2"]),
            os.path.basename(dirs["theirs"]),
            "not-ours",
        ]
    )
    assert scratch.sweep_builds(str(tmp_path / "empty"), idle) == []
    assert len(asked) == 1  # nothing to ask about
