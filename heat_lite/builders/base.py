"""What a builder is: options in, one image (a file or a URL) out.

A builder is a stevedore plugin (namespace ``heat_lite.builders``) made
with the ``[apps]`` option group (``conf``); the app service calls
``validate_options()`` when an app is created or updated (so a bad option
is a 400 then, not a failed build later) and ``build()`` once per build,
in a scratch directory of that build's, with a ``log`` callback that gets
each line of the build log while it runs.
"""

import dataclasses
import hashlib
import re

from heat_lite.common import exception

DISK_FORMATS = ("qcow2", "raw", "vmdk", "vdi", "vhd", "vhdx", "iso")
CONTAINER_FORMATS = ("bare", "ova", "ovf", "docker", "compressed")
MiB = 1024 * 1024


class InvalidBuildOptions(exception.Invalid):
    msg_fmt = "Builder %(builder)s: %(reason)s"


class BuildFailed(exception.HeatLiteException):
    msg_fmt = "Builder %(builder)s failed: %(reason)s"


@dataclasses.dataclass(frozen=True)
class Artifact:
    """An image to upload: a local ``path``, or a ``url`` for Glance to
    import itself (``web-download``); size and sha256 when known."""

    disk_format: str
    container_format: str
    path: str | None = None
    url: str | None = None
    size: int | None = None
    sha256: str | None = None


@dataclasses.dataclass(frozen=True)
class Option:
    """One option of a builder's schema."""

    kind: type
    default: object = None
    required: bool = False
    choices: tuple = ()
    pattern: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    help: str = ""


class Builder:
    """Base of builders. Subclasses set ``name`` and ``options_schema``
    and implement ``build()``."""

    name = None
    options_schema = {}

    def __init__(self, conf):
        """:param conf: the ``[apps]`` option group (or any object with
        the same attributes)."""
        self.conf = conf

    def validate_options(self, options):
        """Return ``options`` with defaults filled in.

        :raises InvalidBuildOptions: naming the first wrong option.
        """
        return validate(self.name, self.options_schema, options)

    def build(self, checkout_dir, options, scratch_dir, log, check=None):
        """Build the image of the files under ``checkout_dir``.

        :param checkout_dir: the commit's files (read only for builders).
        :param options: validated options.
        :param scratch_dir: this build's directory to write into.
        :param log: called with each line of the build log.
        :param check: called often while a long step runs (``process.run``
            does); it raises to stop the build (a cancel), and what it
            raises must be let through.
        :returns: Artifact.
        :raises BuildFailed:
        """
        raise NotImplementedError

    def failed(self, reason):
        return BuildFailed(builder=self.name, reason=reason)


def validate(builder, schema, options):
    """Check ``options`` (a JSON object) against ``schema``."""
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise InvalidBuildOptions(
            builder=builder, reason="options must be an object"
        )
    unknown = sorted(set(options) - set(schema))
    if unknown:
        raise InvalidBuildOptions(
            builder=builder,
            reason="unknown option(s) %s; known: %s"
            % (
                ", ".join(map(str, unknown)),
                ", ".join(sorted(schema)) or "none",
            ),
        )
    result = {}
    for name, opt in schema.items():
        if name not in options or options[name] is None:
            if opt.required:
                raise InvalidBuildOptions(
                    builder=builder, reason="option %r is required" % name
                )
            result[name] = opt.default
            continue
        result[name] = _check(builder, name, opt, options[name])
    return result


def _check(builder, name, opt, value):
    def bad(why):
        return InvalidBuildOptions(
            builder=builder, reason="option %r %s" % (name, why)
        )

    # bool is an int in Python; an int option refuses true/false.
    if not isinstance(value, opt.kind) or (
        opt.kind is int and isinstance(value, bool)
    ):
        raise bad("must be of type %s" % opt.kind.__name__)
    if opt.choices and value not in opt.choices:
        raise bad("must be one of %s" % ", ".join(map(str, opt.choices)))
    if opt.pattern and not re.fullmatch(opt.pattern, value):
        raise bad("does not match %s" % opt.pattern)
    if opt.minimum is not None and value < opt.minimum:
        raise bad("must be at least %d" % opt.minimum)
    if opt.maximum is not None and value > opt.maximum:
        raise bad("must be at most %d" % opt.maximum)
    return value


def file_digest(path):
    """Return (size, sha256 hex) of a file, read in blocks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()
