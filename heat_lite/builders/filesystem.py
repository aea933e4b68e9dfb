"""The ``filesystem`` builder: an ext4 disk image of the commit's files.

``mkfs.ext4 -d <tree>`` fills a new file system from a directory without
mounting it, so no root and no loop device are needed: the image is a
sparse file sized from the tree, then (when ``qemu-img`` is installed)
converted to qcow2. Without ``qemu-img`` a qcow2 request gets a raw image
and the log says so; the artifact's ``disk_format`` tells the truth.
The root directory is owned by root (``-E root_owner=0:0``); files keep
the owner they have in the checkout (the engine's user).
"""

import os
import shutil

from heat_lite.apps import process
from heat_lite.builders import base

# /usr/sbin holds mkfs.ext4, and is not on every user's PATH.
_SBIN = "/usr/local/sbin:/usr/sbin:/sbin"
_MIN_SIZE = 16 * base.MiB
# An inode and a directory entry's worth of blocks per file, a journal
# and the group tables: generous on small trees, ~25% on large ones.
_PER_FILE = 8192
_OVERHEAD = 1.25


def _env():
    env = process.base_env()
    env["PATH"] = env["PATH"] + ":" + _SBIN
    return env


def image_size(tree, extra_mb):
    """Bytes for an ext4 holding ``tree`` plus ``extra_mb`` MiB free."""
    files = sum(len(d) + len(f) for _, d, f in os.walk(tree)) + 1
    data = process.tree_size(tree) + files * _PER_FILE
    size = max(_MIN_SIZE, int(data * _OVERHEAD) + extra_mb * base.MiB)
    return -(-size // base.MiB) * base.MiB


class FilesystemBuilder(base.Builder):
    name = "filesystem"
    options_schema = {
        "label": base.Option(
            str, default="app", pattern=r"[A-Za-z0-9_.-]{1,16}",
            help="File system label (ext4 allows 16 bytes).",
        ),
        "disk_format": base.Option(
            str, default="qcow2", choices=("qcow2", "raw"),
            help="qcow2 (needs qemu-img on the engine) or raw.",
        ),
        "free_space_mb": base.Option(
            int, default=64, minimum=0, maximum=1024 * 1024,
            help="Free space left in the file system, in MiB.",
        ),
    }  # fmt: skip

    def build(self, checkout_dir, options, scratch_dir, log, check=None):
        env = _env()
        mkfs = shutil.which("mkfs.ext4", path=env["PATH"])
        if mkfs is None:
            raise self.failed("mkfs.ext4 is not installed on the engine")
        size = image_size(checkout_dir, options["free_space_mb"])
        limit = self.conf.max_image_size * base.MiB
        if size > limit:
            raise self.failed(
                "the tree needs an image of %d MiB, more than "
                "[apps] max_image_size (%d MiB)"
                % (size // base.MiB, self.conf.max_image_size)
            )
        raw = os.path.join(scratch_dir, "image.raw")
        with open(raw, "wb") as f:
            f.truncate(size)  # sparse: blocks are written by mkfs only
        log(
            "filesystem: ext4 of %d MiB from the checkout" % (size // base.MiB)
        )
        self._run(
            [mkfs, "-q", "-F", "-t", "ext4", "-L", options["label"],
             "-E", "root_owner=0:0", "-d", checkout_dir, raw],
            "mkfs.ext4", scratch_dir, env, log, check,
        )  # fmt: skip
        disk_format = options["disk_format"]
        path = raw
        if disk_format == "qcow2":
            path = self._to_qcow2(raw, scratch_dir, env, log, check)
            disk_format = "raw" if path == raw else "qcow2"
        length, digest = base.file_digest(path)
        return base.Artifact(
            disk_format=disk_format,
            container_format="bare",
            path=path,
            size=length,
            sha256=digest,
        )

    def _to_qcow2(self, raw, scratch_dir, env, log, check=None):
        qemu_img = shutil.which("qemu-img", path=env["PATH"])
        if qemu_img is None:
            log("filesystem: qemu-img is not installed: the image stays raw")
            return raw
        out = os.path.join(scratch_dir, "image.qcow2")
        self._run(
            [qemu_img, "convert", "-q", "-f", "raw", "-O", "qcow2", raw, out],
            "qemu-img convert", scratch_dir, env, log, check,
        )  # fmt: skip
        os.unlink(raw)
        return out

    def _run(self, argv, what, scratch_dir, env, log, check=None):
        try:
            process.run(
                argv,
                what=what,
                cwd=scratch_dir,
                env=env,
                timeout=self.conf.build_timeout,
                log=log,
                watch=scratch_dir,
                limit=2 * self.conf.max_image_size * base.MiB,
                check=check,
            )
        except process.CommandFailed as exc:
            raise self.failed(str(exc)) from exc
