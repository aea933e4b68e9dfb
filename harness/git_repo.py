"""A real git server on disk for app build tests: a bare repository
(what an app's ``file://`` source names) and a developer's clone that
commits and pushes to it."""

import os
import subprocess
import uuid

from harness import polling
from heat_lite.common.states import BuildStatus
from heat_lite.db import builds as db_builds

# The template of an app in the functional tests: one image parameter,
# which each deploy sets to the build's image.
APP_TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"image": {"type": "string"}},
}

GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}


def git(cwd, *args):
    out = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True,
        capture_output=True, text=True,
    )  # fmt: skip
    return out.stdout.strip()


class BareRepo:
    """``<root>/app.git`` (bare) and ``<root>/work`` (a clone of it)."""

    def __init__(self, root, branch="main"):
        self.bare = os.path.join(str(root), "app.git")
        self.work = os.path.join(str(root), "work")
        self.url = "file://" + self.bare
        os.makedirs(self.work)
        git(str(root), "init", "-q", "--bare", "-b", branch, self.bare)
        git(self.work, "init", "-q", "-b", branch)
        git(self.work, "remote", "add", "origin", self.bare)

    def push(self, files, message="change", branch="main"):
        """Commit ``files`` ({path: text or bytes}) on ``branch`` and push
        it; return the commit id."""
        if git(self.work, "branch", "--show-current") != branch:
            git(self.work, "checkout", "-q", "-B", branch)
        for name, content in files.items():
            full = os.path.join(self.work, name)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            mode = "wb" if isinstance(content, bytes) else "w"
            with open(full, mode) as f:
                f.write(content)
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "--allow-empty", "-m", message)
        git(self.work, "push", "-q", "origin", "HEAD:refs/heads/" + branch)
        return git(self.work, "rev-parse", "HEAD")


def queue_build(app, commit, branch="main", delivery=None, builder=None):
    """Store a push of ``commit`` to ``branch`` of ``app`` as the engine
    topic does (a QUEUED build; a ``delivery`` id makes it a webhook's)."""
    from heat_lite.db import builds as db_builds

    return db_builds.build_create(
        {
            "id": str(uuid.uuid4()),
            "app_id": app["id"],
            "tenant": app["tenant"],
            "branch": branch,
            "ref": "refs/heads/" + branch,
            "commit": commit,
            "source": "webhook" if delivery else "push",
            "delivery_id": delivery,
            "builder": builder or app["spec"]["builder"]["name"],
        }
    )


def finished_build(tenant, build, timeout=300):
    """Poll heat_lite's database (attached, ``harness.databases``) until
    ``build`` (a dict with ``id`` and ``app_id``) is finished; its row.
    The deadline's message carries the end of the build's log."""

    def done():
        row = db_builds.build_get(tenant, build["app_id"], build["id"])
        return row if row["status"] in BuildStatus.FINISHED else None

    return polling.until(
        done,
        timeout,
        lambda: (
            "build %s finished: %s"
            % (build["id"], db_builds.build_log_read(build["id"])[0][-2000:])
        ),
        0.5,
    )
