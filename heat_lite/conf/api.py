"""Options of the REST API service ([api] group)."""

from oslo_config import cfg

GROUP = "api"

opts = [
    cfg.HostAddressOpt(
        "bind_host",
        default="127.0.0.1",
        help="Address the API listens on. With auth_strategy=noauth only "
        "loopback addresses are accepted unless allow_insecure_noauth "
        "is set.",
    ),
    cfg.PortOpt("bind_port", default=8004, help="TCP port of the API."),
    cfg.StrOpt(
        "auth_strategy",
        default="noauth",
        choices=[
            (
                "noauth",
                "No authentication: the project comes from the "
                "URL, the user from X-Auth-User. Loopback only.",
            ),
            ("keystone", "Tokens validated by keystonemiddleware."),
        ],
        help="How API requests are authenticated.",
    ),
    cfg.BoolOpt(
        "allow_insecure_noauth",
        default=False,
        help="Allow auth_strategy=noauth on a non-loopback bind_host. "
        "Anyone who reaches the port can then act as any project.",
    ),
    cfg.IntOpt(
        "threads",
        default=16,
        min=1,
        max=1024,
        help="Number of threads serving HTTP requests.",
    ),
    cfg.IntOpt(
        "client_socket_timeout",
        default=30,
        min=1,
        max=3600,
        help="Seconds a client may take to send a whole request, head and "
        "body (the body up to max_json_body_size), before a thread is "
        "given to it; past that the connection is closed. Also the "
        "seconds an idle kept-alive connection is kept.",
    ),
    cfg.IntOpt(
        "backlog",
        default=128,
        min=1,
        max=65535,
        help="Connections the kernel may hold before the API accepts them "
        "(the listen backlog).",
    ),
    cfg.IntOpt(
        "max_queued_requests",
        default=256,
        min=1,
        max=100000,
        help="Requests that may wait for a free thread; past that a "
        "request gets 503 at once.",
    ),
    cfg.IntOpt(
        "max_waiting_connections",
        default=2000,
        min=1,
        max=1000000,
        help="Connections that may wait for their request to arrive in "
        "full; past that the oldest is closed. Lowered at start to what "
        "the process's open-files limit leaves room for.",
    ),
    # Slow request bodies (issue 26): what one peer, and all bodies being
    # received, may hold.
    cfg.IntOpt(
        "max_connections_per_peer",
        default=100,
        min=0,
        help="Connections one client address (an IPv6 /64) may hold open; "
        "past that a new one gets 429 at once. 0: no limit. Behind a "
        "load balancer or proxy every connection comes from its "
        "address: set 0 (or its own connection limit) there, and bound "
        "clients at the load balancer instead.",
    ),
    cfg.IntOpt(
        "max_request_buffer_size",
        default=67108864,
        min=1,
        help="Bytes of memory for requests larger than 32 KiB (bodies up "
        "to max_json_body_size are read in full before a thread gets "
        "them): each reserves its Content-Length before it is read and "
        "holds it until it is answered. While it is spent, further such "
        "requests wait unread, first come first served, within their "
        "client_socket_timeout. Raised at start to what one chunked "
        "request of max_json_body_size may need.",
    ),
    cfg.BoolOpt(
        "dashboard",
        default=True,
        help="Serve the web dashboard at /dashboard/ (and redirect "
        "browsers asking for / there). It uses the public API only.",
    ),
    cfg.URIOpt(
        "dashboard_keystone_url",
        help="Keystone URL the dashboard's login form authenticates "
        "against (auth_strategy=keystone). Unset: "
        "[keystone_authtoken] www_authenticate_uri.",
    ),
    cfg.BoolOpt(
        "dashboard_secure_cookie",
        default=False,
        help="Mark the dashboard's session cookie Secure (sent over "
        "HTTPS only) even when the request did not arrive over HTTPS "
        "(a TLS-terminating proxy in front). Requests that did are "
        "always answered with a Secure cookie.",
    ),
    # What web pages may make a browser send (heat_lite.api.origin).
    cfg.ListOpt(
        "allowed_origins",
        default=[],
        help="Origins (scheme://host[:port], as browsers send them in "
        "Origin) besides the API's own whose pages may send "
        "state-changing requests (POST, PUT, PATCH, DELETE); any other "
        "Origin gets 403. For a front end whose public address is not "
        "the Host the API sees (a proxy that rewrites Host). This is not "
        "CORS: no Access-Control-* header is ever answered, so a page "
        "of another origin still cannot send JSON or read answers.",
    ),
    cfg.ListOpt(
        "allowed_hosts",
        default=[],
        help="auth_strategy=noauth: Host header values the API answers "
        "besides bind_host, localhost, 127.0.0.1 and [::1] with "
        "bind_port (any address with bind_port when bind_host is "
        "0.0.0.0 or ::, and the host of heat_waitcondition_server_url); "
        "any other Host gets 403, which stops DNS rebinding (a web page "
        "whose name is made to resolve to this address). A name alone "
        "matches any port, name:port (or [v6]:port) that port only. For "
        "names that reach the API through a proxy or /etc/hosts.",
    ),
    cfg.IntOpt(
        "rpc_timeout",
        default=60,
        min=1,
        help="Seconds the API waits for an engine to answer a call.",
    ),
    cfg.IntOpt(
        "rpc_call_monitor_timeout",
        default=5,
        min=1,
        help="Seconds after which a call that no engine has taken up is "
        "given up (the engine working on a call says so every half of "
        "this). A read given up this way is asked again once, of any "
        "engine: an engine that stops, or stalls, with a call in hand "
        "costs a reader these seconds instead of rpc_timeout.",
    ),
]


default_opts = [
    cfg.BoolOpt(
        "enable_stack_abandon",
        default=False,
        help="Allow stack abandon and export (abandon returns the stack's "
        "data and removes the stack, leaving its physical resources in "
        "place).",
    ),
    cfg.BoolOpt(
        "enable_stack_adopt",
        default=False,
        help="Allow stack adopt: create a stack from abandon data "
        "(adopt_stack_data), taking over its existing physical resources "
        "instead of creating them.",
    ),
    cfg.ListOpt(
        "hidden_stack_tags",
        default=[],
        help="Stacks with any of these tags are left out of stack lists "
        "unless show_hidden=true is asked for.",
    ),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)
    conf.register_opts(default_opts)


def list_opts():
    return {GROUP: opts, "DEFAULT": default_opts}
