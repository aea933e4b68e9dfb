"""keystone mode: which requests a handle's own token lets past
keystonemiddleware (``api.auth.HandleTokens``), from the header or, for a
software deployment's signal URL, from the query string."""

import pytest

from heat_lite.api import auth

SIGNAL = "/v1/p1/stacks/st/s1/resources/dep/signal"


def _app(name, seen):
    def app(environ, start_response):
        seen.append((name, environ.get(auth.ENV_KEY)))
        return []

    return app


@pytest.fixture
def route():
    seen = []
    wrapped = auth.HandleTokens(
        _app("heat", seen), _app("keystonemiddleware", seen)
    )

    def call(method, path, query="", header=None):
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
        }
        if header:
            environ["HTTP_X_AUTH_TOKEN"] = header
        wrapped(environ, lambda *a: None)
        return seen.pop()

    return call


def test_a_signal_post_with_the_token_in_the_query_skips_keystone(route):
    where, ctxt = route("POST", SIGNAL, "token=hlwc-abc")
    assert where == "heat"
    assert (ctxt.handle_token, ctxt.project_id, ctxt.roles) == (
        "hlwc-abc",
        "p1",
        [],
    )
    assert route("POST", SIGNAL, header="hlwc-abc")[1].handle_token == (
        "hlwc-abc"
    )


@pytest.mark.parametrize(
    "method,path,query,header",
    [
        ("GET", SIGNAL, "token=hlwc-abc", None),  # only a POST
        ("POST", "/v1/p1/stacks/st/s1", "token=hlwc-abc", None),
        ("POST", SIGNAL, "token=keystone-token", None),  # not a handle's
        ("POST", SIGNAL, "", None),
        # A Keystone token in the header wins over the query's.
        ("POST", SIGNAL, "token=hlwc-abc", "keystone-token"),
    ],
)
def test_everything_else_goes_to_keystonemiddleware(
    route, method, path, query, header
):
    assert route(method, path, query, header) == ("keystonemiddleware", None)
