"""The route table of the v1 API: path patterns and methods → handlers.

An explicit table (like Heat's) makes 404 vs 405 exact: a path that
matches a pattern but not the method gets 405 with ``Allow``; ``OPTIONS``
gets 204 with ``Allow``.
"""

import re

import webob.exc


class Router:
    """Ordered (regex, {method: handler}) pairs; first match wins."""

    def __init__(self):
        self._routes = []
        self._patterns = []

    def add(self, pattern, **handlers):
        """Route ``pattern`` (``{name}`` captures one path segment).

        Every handler must declare its policy rule (``request.rule``).
        """
        for method, handler in handlers.items():
            if not getattr(handler, "policy_rule", None):
                raise ValueError(
                    "%s %s has no policy rule" % (method, pattern)
                )
        regex = re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", pattern)
        self._routes.append((re.compile(r"\A%s/?\Z" % regex), handlers))
        self._patterns.append(pattern)

    def routes(self):
        """[(pattern as added, {method: handler})] in matching order."""
        return [
            (pattern, dict(handlers))
            for pattern, (_regex, handlers) in zip(
                self._patterns, self._routes, strict=True
            )
        ]

    def match(self, method, path):
        """Return (handler, captured args).

        :raises webob.exc.HTTPNotFound: no pattern matches.
        :raises webob.exc.HTTPMethodNotAllowed: wrong method (Allow set).
        """
        for regex, handlers in self._routes:
            found = regex.match(path)
            if not found:
                continue
            handler = handlers.get(method)
            if handler is None:
                allow = ", ".join(sorted(handlers))
                if method == "OPTIONS":
                    raise _Options(allow)
                exc = webob.exc.HTTPMethodNotAllowed()
                exc.headers["Allow"] = allow
                raise exc
            return handler, found.groupdict()
        raise webob.exc.HTTPNotFound()


class _Options(webob.exc.HTTPNoContent):
    def __init__(self, allow):
        super().__init__()
        self.headers["Allow"] = allow
