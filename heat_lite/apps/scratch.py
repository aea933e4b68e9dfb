"""A private directory per build, and the sweeping of dead builds' ones.

A build writes its checkout and its image under ``[apps] scratch_dir``
(default: the system's temporary directory), in a directory of its own
that only the engine's user can read (a checkout can hold secrets of the
app). ``build_dir()`` removes it when the build ends, however it ends;
an engine killed mid-build leaves its directory behind: at its start an
engine removes the directories of its database's builds that are no
longer running (``sweep_builds``: the build is named in the directory's
name). A directory of a build the database does not know is left alone:
several deployments may build under one temporary directory, and each
knows only its own builds. ``sweep()`` removes old ones whatever their
build.
"""

import contextlib
import os
import re
import shutil
import tempfile
import time

PREFIX = "heat-lite-build-"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def root_of(scratch_dir):
    """The directory builds are made under (created if missing)."""
    root = scratch_dir or tempfile.gettempdir()
    os.makedirs(root, mode=0o700, exist_ok=True)
    return root


@contextlib.contextmanager
def build_dir(scratch_dir, build_id):
    """Yield a new empty 0700 directory for ``build_id``; remove it after.

    :param scratch_dir: ``[apps] scratch_dir`` (None: the temp dir).
    :param build_id: names the directory (unsafe characters replaced).
    """
    name = PREFIX + _UNSAFE.sub("_", str(build_id))[:64] + "-"
    path = tempfile.mkdtemp(prefix=name, dir=root_of(scratch_dir))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sweep(scratch_dir, max_age):
    """Remove build directories not modified for ``max_age`` seconds (left
    by engines that died mid-build); return the paths removed."""
    now = time.time()
    removed = []
    for _build, path in _build_dirs(root_of(scratch_dir)):
        try:
            if now - os.stat(path, follow_symlinks=False).st_mtime < max_age:
                continue
        except FileNotFoundError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return sorted(removed)


def _build_dirs(root):
    """(build id as named, path) of every build directory under root."""
    for entry in os.scandir(root):
        if not entry.name.startswith(PREFIX):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
        except FileNotFoundError:
            continue
        # PREFIX + the build id (cut at 64) + "-" + mkdtemp's suffix
        yield entry.name[len(PREFIX) :].rsplit("-", 1)[0], entry.path


def sweep_builds(scratch_dir, idle):
    """Remove the build directories whose build is known and not running
    (left by an engine killed mid-build, its build since finished or
    queued again); return the paths removed.

    :param idle: called with the build ids named by the directories,
        returns the set of those known to be not running. The others are
        running (their directories in use by this host's other engines)
        or not this deployment's (in use by another's): never removed.
    """
    found = list(_build_dirs(root_of(scratch_dir)))
    if not found:
        return []
    ended = idle(sorted({build for build, _ in found}))
    removed = []
    for build, path in found:
        if build in ended:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return sorted(removed)
