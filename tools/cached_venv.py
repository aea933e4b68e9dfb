"""A virtualenv installed once and cached, keyed by a digest of its pins.

The test cloud, tempest and the Heat of the benchmarks each install from
PyPI into a venv apart from heat_lite's own (their dependency sets
differ). Each names its venv ``<prefix>-<digest>`` under one cache
directory, so a change of pins makes a new venv and an unchanged tree
reuses the cached one. A venv counts only once its install finished: a
marker file is written last, and a half-made venv is removed and redone.
"""

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time

CACHE = os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
    "heat_lite",
)


def file_digest(*paths, root=None):
    """12 hex digits naming the contents of ``paths`` (and, when ``root``
    is given, their names relative to it: a renamed file changes it)."""
    sha = hashlib.sha256()
    for path in paths:
        if root is not None:
            sha.update(os.path.relpath(path, root).encode())
        with open(path, "rb") as f:
            sha.update(f.read())
    return sha.hexdigest()[:12]


def ready(venv, marker=".complete"):
    return os.path.exists(os.path.join(venv, marker))


def ensure(
    venv,
    pip_args,
    what,
    marker=".complete",
    log=print,
    timeout=None,
    after=None,
):
    """Make ``venv`` a complete venv with ``pip install -q *pip_args``
    done in it, unless it already is one.

    :param after: ``after(venv)``, run once pip is done and before the
        venv counts as complete (files a package wants copied into its
        tree, assets built once for every user of the venv).
    :returns: seconds spent installing (0.0 when the cache served)
    :raises subprocess.CalledProcessError: if pip fails (its output is in
        ``<venv>.install.log``).
    """
    if ready(venv, marker):
        return 0.0
    with _locked(venv):
        if ready(venv, marker):  # made meanwhile by another run
            return 0.0
        return _install(venv, pip_args, what, marker, log, timeout, after)


@contextlib.contextmanager
def _locked(venv):
    """One installer per venv: two runs side by side (two CI runs, two
    xdist workers) wait for each other instead of removing each other's
    half-made venv."""
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    fd = os.open(venv + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _install(venv, pip_args, what, marker, log, timeout, after=None):
    started = time.monotonic()
    shutil.rmtree(venv, ignore_errors=True)
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    log("installing %s into %s" % (what, venv))
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [
        os.path.join(venv, "bin", "pip"),
        "install",
        "-q",
        "--disable-pip-version-check",
    ]
    with open(venv + ".install.log", "w") as out:
        subprocess.run(
            pip + list(pip_args),
            check=True,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    if after is not None:
        after(venv)
    open(os.path.join(venv, marker), "w").close()
    return time.monotonic() - started


def once(where, make):
    """The directory ``where``, filled by ``make(where)`` the first time
    (one maker at a time; a marker written last, so a half-made one is
    made again): things a run would otherwise make each time."""
    with _locked(where):
        if not ready(where):
            shutil.rmtree(where, ignore_errors=True)
            os.makedirs(where)
            make(where)
            open(os.path.join(where, ".complete"), "w").close()
    return where


def sdist(requirement, timeout=None):
    """The source distribution of ``requirement`` (a pinned ``name==X``),
    fetched once with ``pip download`` into the cache and kept: the path
    of its archive. A run fetched it with pip each time (its index,
    5-10 CPU-s and up to a minute and a half under load)."""

    def download(where):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet"]
            + ["--no-deps", "--no-binary", ":all:", "--dest", where]
            + [requirement],
            check=True,
            timeout=timeout,
        )

    where = once(
        os.path.join(CACHE, "sdist-" + requirement.replace("==", "-")),
        download,
    )
    [archive] = [f for f in os.listdir(where) if not f.startswith(".")]
    return os.path.join(where, archive)
