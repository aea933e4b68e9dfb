"""The artifact builder imports an image the user's CI built."""

import hashlib
import http.server
import json
import os

import pytest

from heat_lite.builders import artifact, base
from tests.unit.apps.conftest import serve_http
from tests.unit.builders.conftest import run_builder

IMAGE = os.urandom(1536 * 1024)  # more than 1 MiB
DIGEST = hashlib.sha256(IMAGE).hexdigest()


class _Images(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/redirect.qcow2":
            self.send_response(302)
            self.send_header("Location", "/image.qcow2")
            self.end_headers()
            return
        if self.path not in ("/image.qcow2", "/chunked.qcow2"):
            self.send_error(404)
            return
        self.send_response(200)
        if self.path == "/image.qcow2":
            self.send_header("Content-Length", str(len(IMAGE)))
        self.end_headers()
        self.wfile.write(IMAGE)

    def log_message(self, *args):
        pass


@pytest.fixture
def images():
    gen = serve_http(_Images)
    yield next(gen)
    next(gen, None)


def build(conf, checkout, scratch, **options):
    return run_builder(
        artifact.ArtifactBuilder(conf), checkout, scratch, options
    )


def test_web_download_hands_the_url_to_glance(make_conf, checkout, scratch):
    conf = make_conf(allowed_artifact_urls=["https://ci.example.com/*"])
    url = "https://ci.example.com/builds/42/app.qcow2"
    art, _ = build(conf, checkout, scratch, image_url=url, sha256=DIGEST)
    assert art == base.Artifact(
        disk_format="qcow2", container_format="bare", url=url, sha256=DIGEST
    )
    assert os.listdir(scratch) == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "https://ci.example.com.evil.net/x.qcow2",
        "file:///etc/shadow",
        "ftp://ci.example.com/x.qcow2",
    ],
)
def test_url_must_be_allowed(make_conf, checkout, scratch, url):
    conf = make_conf(
        allowed_artifact_urls=["https://ci.example.com/*", "file:///*"]
    )
    with pytest.raises(base.BuildFailed, match="not allowed"):
        build(conf, checkout, scratch, image_url=url)


def test_nothing_allowed_by_default(make_conf, checkout, scratch):
    with pytest.raises(base.BuildFailed, match="allowed_artifact_urls"):
        build(make_conf(), checkout, scratch, image_url="https://a.b/c")


def test_url_from_a_file_of_the_commit(make_conf, checkout, scratch):
    os.mkdir(os.path.join(checkout, ".heat-lite"))
    with open(os.path.join(checkout, artifact.IMAGE_FILE), "w") as f:
        json.dump(
            {
                "image_url": "https://ci.example.com/a.raw",
                "disk_format": "raw",
            },
            f,
        )
    conf = make_conf(allowed_artifact_urls=["https://ci.example.com/*"])
    art, lines = build(conf, checkout, scratch)
    assert (art.url, art.disk_format) == (
        "https://ci.example.com/a.raw",
        "raw",
    )
    assert any(artifact.IMAGE_FILE in line for line in lines)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no image_url option and no readable"),
        ("{", "is not JSON"),
        ('{"image_url": 5}', "must be of type str"),
        ('{"colour": "red"}', "unknown option"),
        ("{}", "names no image_url"),
        ("x" * 70000, "larger than"),
    ],
)
def test_bad_file_of_the_commit(
    make_conf, checkout, scratch, content, message
):
    if content is not None:
        os.mkdir(os.path.join(checkout, ".heat-lite"))
        with open(os.path.join(checkout, artifact.IMAGE_FILE), "w") as f:
            f.write(content)
    conf = make_conf(allowed_artifact_urls=["https://ci.example.com/*"])
    with pytest.raises(base.BuildFailed, match=message):
        build(conf, checkout, scratch)


def test_file_of_the_commit_is_never_a_symlink(
    make_conf, checkout, scratch, tmp_path
):
    """A commit can hold a symlink to a file of the engine's host."""
    outside = tmp_path / "secret.json"
    outside.write_text('{"image_url": "https://ci.example.com/a"}')
    os.mkdir(os.path.join(checkout, ".heat-lite"))
    os.symlink(outside, os.path.join(checkout, artifact.IMAGE_FILE))
    conf = make_conf(allowed_artifact_urls=["https://ci.example.com/*"])
    with pytest.raises(base.BuildFailed):
        build(conf, checkout, scratch)
    os.unlink(os.path.join(checkout, artifact.IMAGE_FILE))
    os.rmdir(os.path.join(checkout, ".heat-lite"))
    os.symlink(tmp_path, os.path.join(checkout, ".heat-lite"))
    os.rename(outside, tmp_path / "image.json")
    with pytest.raises(base.BuildFailed, match="not a file of the commit"):
        build(conf, checkout, scratch)


@pytest.mark.parametrize("path", ["/image.qcow2", "/chunked.qcow2"])
def test_download_streams_and_digests(
    make_conf, checkout, scratch, images, path
):
    conf = make_conf(allowed_artifact_urls=["http://127.0.0.1:*/*"])
    art, _ = build(
        conf, checkout, scratch, image_url=images + path,
        method="download", sha256=DIGEST,
    )  # fmt: skip
    assert (art.size, art.sha256, art.url) == (len(IMAGE), DIGEST, None)
    with open(art.path, "rb") as f:
        assert f.read() == IMAGE


def test_download_with_wrong_digest(make_conf, checkout, scratch, images):
    conf = make_conf(allowed_artifact_urls=["http://127.0.0.1:*/*"])
    with pytest.raises(base.BuildFailed, match="sha256"):
        build(
            conf, checkout, scratch, image_url=images + "/image.qcow2",
            method="download", sha256="0" * 64,
        )  # fmt: skip


@pytest.mark.parametrize("path", ["/image.qcow2", "/chunked.qcow2"])
def test_download_size_cap(make_conf, checkout, scratch, images, path):
    conf = make_conf(
        allowed_artifact_urls=["http://127.0.0.1:*/*"], max_image_size=1
    )
    with pytest.raises(base.BuildFailed, match="max_image_size"):
        build(
            conf, checkout, scratch, image_url=images + path,
            method="download",
        )  # fmt: skip


def test_download_does_not_follow_redirects(
    make_conf, checkout, scratch, images
):
    conf = make_conf(allowed_artifact_urls=["http://127.0.0.1:*/*"])
    with pytest.raises(base.BuildFailed, match="302"):
        build(
            conf, checkout, scratch, image_url=images + "/redirect.qcow2",
            method="download",
        )  # fmt: skip
