"""The ``artifact`` builder: an image the user's CI built already.

The image's URL comes from the build options or, when they name none, from
``.heat-lite/image.json`` in the commit (the same keys). The URL must be
one of the operator's ``[apps] allowed_artifact_urls`` (http or https):
the engine (``download``) or Glance (``web-download``) fetches it from
inside the cloud. ``web-download`` hands the URL to Glance; ``download``
streams it into the scratch directory here, without following redirects,
within ``[apps] max_image_size`` and ``build_timeout``, checking the
``sha256`` when one is given.
"""

import hashlib
import json
import os
import stat
import time
import urllib.error
import urllib.request

from heat_lite.apps import sources
from heat_lite.builders import base

IMAGE_FILE = os.path.join(".heat-lite", "image.json")
_MAX_IMAGE_FILE = 65536


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect could point anywhere, past the allowed URLs."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class ArtifactBuilder(base.Builder):
    name = "artifact"
    options_schema = {
        "image_url": base.Option(str, help="http(s) URL of the image."),
        "disk_format": base.Option(
            str, default="qcow2", choices=base.DISK_FORMATS
        ),
        "container_format": base.Option(
            str, default="bare", choices=base.CONTAINER_FORMATS
        ),
        "sha256": base.Option(str, pattern=r"[0-9a-f]{64}"),
        "method": base.Option(
            str, default="web-download", choices=("web-download", "download")
        ),
    }

    def build(self, checkout_dir, options, scratch_dir, log, check=None):
        if not options.get("image_url"):
            options = self._from_commit(checkout_dir, options, log)
        url = options["image_url"]
        try:
            sources.check_source(
                url,
                self.conf.allowed_artifact_urls,
                schemes=("http", "https"),
                option="allowed_artifact_urls",
            )
        except sources.SourceNotAllowed as exc:
            raise self.failed(str(exc)) from exc
        if options["method"] == "web-download":
            log("artifact: Glance will import %s" % url)
            return base.Artifact(
                disk_format=options["disk_format"],
                container_format=options["container_format"],
                url=url,
                sha256=options["sha256"],
            )
        path = os.path.join(scratch_dir, "image")
        size, digest = self._download(url, path, log)
        if options["sha256"] and digest != options["sha256"]:
            raise self.failed(
                "sha256 of %s is %s, not %s" % (url, digest, options["sha256"])
            )
        return base.Artifact(
            disk_format=options["disk_format"],
            container_format=options["container_format"],
            path=path,
            size=size,
            sha256=digest,
        )

    def _from_commit(self, checkout_dir, options, log):
        """Options from ``.heat-lite/image.json``, merged over ``options``
        (a regular file inside the checkout: no symlink is followed)."""
        path = os.path.join(checkout_dir, IMAGE_FILE)
        root = os.path.realpath(checkout_dir)
        if os.path.realpath(os.path.dirname(path)) != os.path.join(
            root, ".heat-lite"
        ):
            raise self.failed("%s is not a file of the commit" % IMAGE_FILE)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            raise self.failed(
                "no image_url option and no readable %s (%s)"
                % (IMAGE_FILE, exc.strerror)
            ) from None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise self.failed("%s is not a regular file" % IMAGE_FILE)
            raw = f.read(_MAX_IMAGE_FILE + 1)
        if len(raw) > _MAX_IMAGE_FILE:
            raise self.failed(
                "%s is larger than %d bytes" % (IMAGE_FILE, _MAX_IMAGE_FILE)
            )
        try:
            found = json.loads(raw)
        except ValueError as exc:
            raise self.failed(
                "%s is not JSON (%s)" % (IMAGE_FILE, exc)
            ) from None
        try:
            checked = self.validate_options(found)
        except base.InvalidBuildOptions as exc:
            raise self.failed("%s: %s" % (IMAGE_FILE, exc)) from None
        # The file's own keys win; the app's options fill in the rest.
        merged = dict(options)
        merged.update({k: checked[k] for k in found})
        if not merged.get("image_url"):
            raise self.failed("%s names no image_url" % IMAGE_FILE)
        log("artifact: image named by %s" % IMAGE_FILE)
        return merged

    def _download(self, url, path, log):
        limit = self.conf.max_image_size * base.MiB
        deadline = time.monotonic() + self.conf.build_timeout
        opener = urllib.request.build_opener(_NoRedirect)
        digest = hashlib.sha256()
        size = 0
        try:
            with opener.open(url, timeout=60) as resp, open(path, "wb") as out:
                length = resp.headers.get("Content-Length")
                if length and length.isdigit() and int(length) > limit:
                    raise self.failed(
                        "%s is %s bytes, more than [apps] max_image_size"
                        % (url, length)
                    )
                for block in iter(lambda: resp.read(base.MiB), b""):
                    size += len(block)
                    if size > limit:
                        raise self.failed(
                            "%s is larger than [apps] max_image_size" % url
                        )
                    if time.monotonic() > deadline:
                        raise self.failed(
                            "download of %s exceeded [apps] build_timeout"
                            % url
                        )
                    digest.update(block)
                    out.write(block)
        except (urllib.error.URLError, OSError) as exc:
            raise self.failed("download of %s: %s" % (url, exc)) from exc
        log("artifact: downloaded %d bytes from %s" % (size, url))
        return size, digest.hexdigest()
