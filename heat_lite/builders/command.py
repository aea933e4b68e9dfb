"""The ``command`` builder: the operator's own image build command.

The command is ``[apps] command_builder`` (diskimage-builder, packer, a
script of the operator's), split with ``shlex`` but run without a shell;
users choose none of it and pass no options. It runs in the build's
scratch directory with a scrubbed environment that names the checkout
(``HEAT_LITE_SOURCE``) and the file to write (``HEAT_LITE_OUTPUT``), for at
most ``[apps] build_timeout`` seconds, its output directory bounded by
``[apps] max_image_size``, and every line it prints in the build log.
"""

import os
import shlex
import stat

from heat_lite.apps import process
from heat_lite.builders import base


class CommandBuilder(base.Builder):
    name = "command"
    options_schema = {}

    def argv(self):
        """The configured command as an argv list (empty: unavailable)."""
        return shlex.split(self.conf.command_builder or "")

    def build(self, checkout_dir, options, scratch_dir, log, check=None):
        argv = self.argv()
        if not argv:
            raise self.failed("[apps] command_builder is not set")
        out_dir = os.path.join(scratch_dir, "output")
        tmp_dir = os.path.join(scratch_dir, "tmp")
        os.makedirs(out_dir)
        os.makedirs(tmp_dir)
        output = os.path.join(out_dir, "image")
        env = process.base_env(
            HOME=scratch_dir,
            TMPDIR=tmp_dir,
            HEAT_LITE_SOURCE=checkout_dir,
            HEAT_LITE_OUTPUT=output,
        )
        limit = self.conf.max_image_size * base.MiB
        log("command: %s" % shlex.join(argv))
        try:
            process.run(
                argv,
                what="the command builder",
                cwd=scratch_dir,
                env=env,
                timeout=self.conf.build_timeout,
                log=log,
                watch=out_dir,
                limit=limit,
                check=check,
            )
        except process.CommandFailed as exc:
            raise self.failed(str(exc)) from exc
        try:
            st = os.lstat(output)
        except FileNotFoundError:
            raise self.failed(
                "the command wrote no $HEAT_LITE_OUTPUT"
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise self.failed("$HEAT_LITE_OUTPUT is not a regular file")
        size, digest = base.file_digest(output)
        return base.Artifact(
            disk_format=self.conf.command_builder_disk_format,
            container_format="bare",
            path=output,
            size=size,
            sha256=digest,
        )
