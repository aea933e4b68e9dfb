"""The building blocks of the controller tree: pecan's own routing.

Every URL of the API is a ``Node``, a ``pecan.rest.RestController``
whose HTTP methods (``get_all``, ``post``, ``put``, ``patch``,
``delete``: see ``VERBS``) are made by ``verb(handler)``; a URL with no
method of its own (``/v1/{tenant}``) is a ``Branch``, a plain pecan
controller. Both resolve the segment below them with ``_lookup``, from
two class attributes:

* ``_children``: {fixed segment: class} (``"resources"``, ``"events"``);
* ``_param``: (name, class) for any other segment, captured as the path
  parameter ``name`` (``{stack_id}``) and passed to the handler.

A child whose class sets ``_rest`` takes the rest of the path as that
parameter (``/stacks/{name}/resources/...`` is one redirect).

The controllers are made once, with the app (each makes its children);
what ``_lookup`` captures from the path is the request's (``PATH_KEY``
in its environ). Handlers stay plain functions of ``(req, **path
parameters)`` declaring their policy rule (``request.rule``);
``dispatch`` checks it on the URL's project before the handler runs,
the one thing every route shares.

Segments go down through ``_lookup`` before ``RestController`` sees
them (``_route``), so no attribute of a node is reachable by URL, and
``RestController`` routes only the HTTP method of the URL's own node.

What pecan still costs: its ``getargspec`` (pecan 1.8) builds a new
namedtuple class on every call, five calls per request here (two in
pecan's core, three in ``RestController._route``, which a GET skips:
``Node._here``): about 0.5 ms of CPU
per request (GET /v1/p/stacks, API side: 0.86-1.07 ms, 0.41-0.45 ms
with the memoizing patch heat_lite used to apply). heat_lite no longer
patches pecan; the fix belongs upstream (``pecan.compat.getargspec``).
"""

import pecan
import pecan.rest
import webob.exc

from heat_lite.api import faults
from heat_lite.api import request as api_request

# The RestController method of each HTTP method. A GET of the URL itself
# is ``get_all`` to pecan (its ``get`` would take ids from the path as
# arguments, and costs two more signature inspections per request).
VERBS = {
    "get_all": "GET",
    "post": "POST",
    "put": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
}
# Where the query string waits while pecan routes (see ``app``): pecan
# would take ``?_method=`` as the HTTP method and feed parameters to
# controllers as arguments.
QUERY_KEY = "heat_lite.query_string"
# The path parameters of the request, as ``_lookup`` captures them.
PATH_KEY = "heat_lite.path"
# (handler, path parameters) of the request, once routed (for logs and
# the route tests).
ROUTE_KEY = "heat_lite.route"


def dispatch(handler, engine, path):
    """Run ``handler`` for the current pecan request: policy, call, ETag."""
    raw = pecan.request
    environ = raw.environ
    environ["QUERY_STRING"] = environ.pop(QUERY_KEY, "")
    environ[ROUTE_KEY] = (handler, path)
    req = api_request.Request(raw, engine, handler)
    req.authorize(handler.policy_rule, path.get("tenant"))
    return api_request.conditional(
        api_request.to_response(handler(req, **path)), raw
    )


def verb(handler):
    """The controller method of one HTTP method: runs ``handler``."""
    if not getattr(handler, "policy_rule", None):
        raise ValueError("%s has no policy rule" % handler.__name__)

    @pecan.expose(content_type="application/json")
    def method(self):
        return dispatch(
            handler, self._engine, pecan.request.environ.get(PATH_KEY, {})
        )

    method.handler = handler
    method.__name__ = method.__qualname__ = handler.__name__
    return method


def handlers(cls):
    """{HTTP method: handler} of a node class (empty for a branch)."""
    return {
        method: getattr(cls, name).handler
        for name, method in VERBS.items()
        if hasattr(getattr(cls, name, None), "handler")
    }


def walk(cls, path=""):
    """(path, class) of every URL from controller class ``cls`` down, a
    path parameter shown as ``{name}`` (``/stacks/{name}/{stack_id}``)."""
    yield path, cls
    for segment, child in cls._children.items():
        yield from walk(child, path + "/" + segment)
    if cls._param is not None:
        name, child = cls._param
        yield from walk(child, path + "/{%s}" % name)


class _Tree:
    """What ``Node`` and ``Branch`` share: the engine and ``_lookup``."""

    _children = {}
    _param = None
    _rest = None

    def __init__(self, engine):
        self._engine = engine
        self._kids = {seg: cls(engine) for seg, cls in self._children.items()}
        self._param_kid = None
        if self._param is not None:
            name, cls = self._param
            self._param_kid = (name, cls(engine))

    @staticmethod
    def _capture(**params):
        """Add path parameters to the current request's."""
        pecan.request.environ.setdefault(PATH_KEY, {}).update(params)

    def _child(self, child, name, segment, remainder):
        if child._rest:
            value = "/".join((segment,) + remainder).rstrip("/")
            self._capture(**{child._rest: value})
            return child, ()
        if name is not None:
            self._capture(**{name: segment})
        return child, remainder

    @pecan.expose()
    def _lookup(self, segment, *remainder):
        """(child controller, rest of the path) for ``segment``."""
        child = self._kids.get(segment)
        if child is not None:
            return self._child(child, None, segment, remainder)
        if self._param_kid is not None:
            name, child = self._param_kid
            return self._child(child, name, segment, remainder)
        raise webob.exc.HTTPNotFound()

    @pecan.expose()
    def _route(self, args, request=None):
        """pecan's routing hook: a segment below this URL goes to the
        child ``_lookup`` gives, the URL itself to ``_here``; a 404 or a
        405 is final.

        Without this, pecan would look every segment up as an attribute
        first, inspect the signatures of the controllers at every level
        (a fresh namedtuple class each time), and answer a 404 or a 405
        by trying every ``_lookup`` above the URL again, each of which
        walks down to the same answer: 2^depth walks for a wrong method
        on an event.
        """
        try:
            if args and args[0]:
                child, remainder = self._lookup(*args)
                return child._route(list(remainder), request)
            return self._here(args, request)
        except (webob.exc.HTTPNotFound, webob.exc.HTTPMethodNotAllowed) as exc:
            raise faults.PassThrough(exc) from None


class Branch(_Tree):
    """A URL without methods of its own: only a way to its children."""

    def _here(self, args, request):
        raise webob.exc.HTTPNotFound()


class Node(_Tree, pecan.rest.RestController):
    """A URL with methods (``verb``) and, maybe, children."""

    def __init__(self, engine):
        super().__init__(engine)
        self._gets = hasattr(getattr(self, "get_all", None), "handler")

    def _here(self, args, request):
        """This URL's method, by pecan's ``RestController`` (405 with
        ``Allow`` when it has not got it).

        A GET of a URL that has one is answered here first, as
        ``RestController`` would answer it (``get_all``, nothing left of
        the path): its routing inspects three signatures per request, a
        new namedtuple class each time, a tenth of the API's CPU on a
        poll (doc/bench/horizon_tabs.md). Every other method, and a GET
        pecan would see as another (``?_method=``), still goes to it.
        """
        if (
            request.method == "GET"
            and (not args or list(args) == [""])
            and self._gets
            and "_method" not in request.params
        ):
            return self.get_all, []
        return pecan.rest.RestController._route(self, args, request)

    @pecan.expose(content_type="application/json")
    def options(self):
        """204 with the methods of this URL in ``Allow``."""
        response = webob.Response(status=204)
        response.allow = sorted(handlers(type(self)))
        return response


def leaf(**verbs):
    """A node class with only methods: ``leaf(get=handler)`` (lower-case
    HTTP methods)."""
    name = "_".join(h.__name__ for h in verbs.values())
    names = {method.lower(): attr for attr, method in VERBS.items()}
    return type(name, (Node,), {names[k]: verb(h) for k, h in verbs.items()})
