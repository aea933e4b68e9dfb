"""The dashboard's files, served from the package (``static/``).

Only the files present at start-up are served, by exact name: no path
from the URL ever reaches the file system. Each answer has an ETag and
``Cache-Control: no-cache``, so a browser revalidates (304) instead of
downloading the page again, and a strict Content-Security-Policy: the
page runs only its own scripts and talks only to this server. A browser
that accepts gzip gets the files compressed once at start-up (a third of
the bytes on a first visit), with an ETag of their own.
"""

import gzip
import hashlib
import mimetypes
import os

import webob

DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
INDEX = "index.html"
_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; "
        "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def _takes_gzip(request):
    """Only a client that says it takes gzip gets it (no header: none)."""
    if "Accept-Encoding" not in request.headers:
        return False
    return bool(request.accept_encoding.acceptable_offers(["gzip"]))


class Files:
    """The files of ``directory`` (read once), answered by name."""

    def __init__(self, directory=DIRECTORY):
        self._files = {}
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                body = f.read()
            ext = os.path.splitext(name)[1]
            ctype = _TYPES.get(ext) or mimetypes.guess_type(name)[0]
            etag = hashlib.sha256(body).hexdigest()[:32]
            zipped = gzip.compress(body, 9, mtime=0)
            self._files[name] = (
                body,
                ctype or "application/octet-stream",
                etag,
                zipped if len(zipped) < len(body) else None,
            )

    def names(self):
        return sorted(self._files)

    def response(self, request, name):
        """The file's response, or None when there is no such file."""
        found = self._files.get(name or INDEX)
        if found is None:
            return None
        body, ctype, etag, zipped = found
        response = webob.Response(
            content_type=ctype, charset="UTF-8" if "text" in ctype else None
        )
        response.vary = ("Accept-Encoding",)
        if zipped is not None and _takes_gzip(request):
            body, etag = zipped, etag + "-gz"
            response.content_encoding = "gzip"
        response.body = body
        response.etag = etag
        response.cache_control = "no-cache"
        response.headers.update(SECURITY_HEADERS)
        if etag in request.if_none_match:
            response.status = 304
            response.body = b""
        return response
