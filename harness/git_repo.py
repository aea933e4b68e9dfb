"""A real git server on disk for app build tests and the apps benchmark:
a bare repository (what an app's ``file://`` source names) and a
developer's clone that commits and pushes to it, or many commits made at
once (``fast_commits``); a loopback HTTP server of a tiny qcow2 (what the
``artifact`` builder imports); the template of an app on the test cloud."""

import functools
import http.server
import os
import subprocess
import threading
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


def fast_commits(root, count, branch="main"):
    """A bare repository ``<root>/app.git`` with ``count`` commits on
    ``branch``, made in one ``git fast-import``: (its ``file://`` URL,
    the commit ids oldest first)."""
    bare = os.path.join(str(root), "app.git")
    git(str(root), "init", "-q", "--bare", "-b", branch, bare)
    stream = []
    for n in range(count):
        text = "push %d\n" % n
        stream.append(
            "commit refs/heads/%s\nmark :%d\n"
            "committer dev <dev@example.com> %d +0000\n"
            "data %d\n%s" % (branch, n + 1, 1_700_000_000 + n, len(text), text)
        )
        if n:
            stream.append("from :%d\n" % n)
        stream.append(
            "M 644 inline index.html\ndata %d\n%s\n" % (len(text), text)
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=bare,
        env=GIT_ENV,
        input="".join(stream).encode(),
        check=True,
    )
    ids = git(bare, "rev-list", "--reverse", branch).split()
    if len(ids) != count:
        raise RuntimeError(
            "fast-import made %d commits of %d" % (len(ids), count)
        )
    return "file://" + bare, ids


class ServedImage:
    """A loopback HTTP server of one empty qcow2 of ``size`` (qemu-img's
    notation): the image an ``artifact`` build imports, at ``url``."""

    def __init__(self, root, size="1M", name="app.qcow2"):
        root = str(root)
        subprocess.run(
            ["qemu-img", "create", "-q", "-f", "qcow2",
             os.path.join(root, name), size],
            check=True,
        )  # fmt: skip
        handler = functools.partial(
            http.server.SimpleHTTPRequestHandler, directory=root
        )
        handler.log_message = lambda *a: None
        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), handler
        )
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = "http://127.0.0.1:%d" % self.server.server_port
        self.url = "%s/%s" % (self.base, name)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def app_template(resource, outputs=None):
    """An app's template: ``resource`` (a resource definition taking
    the build's image from the parameter ``image``) as ``server``; its
    output ``healthy`` is false for the commit named by the parameter
    ``broken_commit`` (a verification that checks it rejects that
    push); ``outputs`` added to it."""
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {
            "image": {"type": "string"},
            "source_commit": {"type": "string", "default": ""},
            "broken_commit": {"type": "string", "default": "none"},
        },
        "conditions": {
            "broken": {
                "equals": [
                    {"get_param": "source_commit"},
                    {"get_param": "broken_commit"},
                ]
            }
        },
        "resources": {"server": resource},
        "outputs": dict(
            outputs or {}, healthy={"value": {"if": ["broken", False, True]}}
        ),
    }


def server_template(cloud):
    """``app_template`` of a server on the test cloud
    (``harness.cloud.TestCloud``) booted from the build's image."""
    return app_template(
        {
            "type": "OS::Nova::Server",
            "properties": {
                "image": {"get_param": "image"},
                "flavor": cloud.flavor,
                "networks": [{"network": cloud.network}],
            },
        }
    )


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
