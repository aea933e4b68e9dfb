"""The filesystem builder makes a real ext4 image, without root."""

import json
import os
import shutil
import subprocess

import pytest

from heat_lite.builders import base, filesystem
from tests.unit.builders.conftest import run_builder

SBIN = os.environ.get("PATH", "") + ":/usr/local/sbin:/usr/sbin:/sbin"
MKFS = shutil.which("mkfs.ext4", path=SBIN)
DEBUGFS = shutil.which("debugfs", path=SBIN)
QEMU_IMG = shutil.which("qemu-img")

pytestmark = pytest.mark.skipif(MKFS is None, reason="no mkfs.ext4")


def build(conf, checkout, scratch, **options):
    return run_builder(
        filesystem.FilesystemBuilder(conf), checkout, scratch, options
    )


def cat(image, path):
    out = subprocess.run(
        [DEBUGFS, "-R", "cat " + path, image], capture_output=True, check=True
    )
    return out.stdout


@pytest.mark.skipif(DEBUGFS is None, reason="no debugfs")
def test_raw_image_holds_the_tree(make_conf, checkout, scratch):
    art, lines = build(make_conf(), checkout, scratch, disk_format="raw")
    assert (art.disk_format, art.container_format) == ("raw", "bare")
    assert art.url is None
    assert (art.size, art.sha256) == base.file_digest(art.path)
    assert cat(art.path, "/src/app.py") == b"print('hello')\n"
    assert cat(art.path, "/README") == b"an app\n"
    stat = subprocess.run(
        [DEBUGFS, "-R", "stat /link", art.path], capture_output=True, text=True
    ).stdout
    assert "Type: symlink" in stat
    label = subprocess.run(
        [DEBUGFS, "-R", "stats", art.path], capture_output=True, text=True
    ).stdout
    assert "Filesystem volume name:   app" in label
    assert any("ext4" in line for line in lines)


@pytest.mark.skipif(QEMU_IMG is None, reason="no qemu-img")
def test_qcow2_image(make_conf, checkout, scratch):
    art, _ = build(make_conf(), checkout, scratch, label="web")
    assert art.disk_format == "qcow2"
    info = json.loads(
        subprocess.run(
            [QEMU_IMG, "info", "--output=json", art.path],
            capture_output=True, check=True,
        ).stdout
    )  # fmt: skip
    assert info["format"] == "qcow2"
    assert info["virtual-size"] == filesystem.image_size(checkout, 64)
    assert os.listdir(scratch) == ["image.qcow2"]  # the raw one is gone
    if DEBUGFS:
        raw = os.path.join(scratch, "back.raw")
        subprocess.run(
            [QEMU_IMG, "convert", "-O", "raw", art.path, raw], check=True
        )
        assert cat(raw, "/src/app.py") == b"print('hello')\n"


def test_without_qemu_img_the_image_stays_raw(
    make_conf, checkout, scratch, monkeypatch
):
    # mkfs.ext4 is still found in the sbin directories; qemu-img is not.
    monkeypatch.setenv("PATH", "/nonexistent")
    art, lines = build(make_conf(), checkout, scratch, disk_format="qcow2")
    assert art.disk_format == "raw"
    assert art.path.endswith("image.raw")
    assert any("qemu-img is not installed" in line for line in lines)


def test_image_larger_than_the_bound_is_refused(make_conf, checkout, scratch):
    with open(os.path.join(checkout, "big"), "wb") as f:
        f.write(os.urandom(2 * base.MiB))
    with pytest.raises(base.BuildFailed, match="max_image_size"):
        build(
            make_conf(max_image_size=16), checkout, scratch, free_space_mb=14
        )
    assert os.listdir(scratch) == []


def test_size_follows_the_tree(checkout):
    small = filesystem.image_size(checkout, 0)
    with open(os.path.join(checkout, "big"), "wb") as f:
        f.write(os.urandom(32 * base.MiB))
    large = filesystem.image_size(checkout, 0)
    assert small == 16 * base.MiB
    assert 40 * base.MiB <= large <= 48 * base.MiB
    assert filesystem.image_size(checkout, 10) == large + 10 * base.MiB


def test_bad_label_is_refused(make_conf):
    builder = filesystem.FilesystemBuilder(make_conf())
    with pytest.raises(base.InvalidBuildOptions):
        builder.validate_options({"label": "x" * 17})
    with pytest.raises(base.InvalidBuildOptions):
        builder.validate_options({"label": "-O ^has_journal"})
