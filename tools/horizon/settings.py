"""Horizon's ``local_settings.py`` for one Horizon (pure: no I/O).

Horizon's ``openstack_dashboard/settings.py`` reads ``local_settings``
as the top-level module ``local.local_settings`` and appends its own
directory to ``sys.path`` last; so a Horizon's own directory, first on
``PYTHONPATH``, holds ``local/local_settings.py`` and every Horizon of
one shared venv has settings of its own. What the static assets depend
on (``WEBROOT``, ``STATIC_URL``, themes) is the same for all of them:
the venv builds them once (``tools.horizon.venv``).
"""

SETTINGS = """\
# Written by python -m tools.horizon: a Horizon of the test cloud.
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SECRET_KEY = {secret!r}
LOCAL_PATH = {local_path!r}
WEBROOT = "/"
STATIC_ROOT = {static_root!r}
COMPRESS_ENABLED = True
COMPRESS_OFFLINE = True

OPENSTACK_HOST = "127.0.0.1"
OPENSTACK_KEYSTONE_URL = {keystone_url!r}
OPENSTACK_KEYSTONE_DEFAULT_ROLE = "member"
OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = False
OPENSTACK_KEYSTONE_DEFAULT_DOMAIN = "Default"
OPENSTACK_ENDPOINT_TYPE = "publicURL"
# No memcached: sessions live in the signed cookie, the cache in memory.
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
CACHES = {{
    "default": {{
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache"
    }}
}}
TIME_ZONE = "UTC"
# Pages of {page_size} rows (the user may change it in Settings): the
# tests page over the stacks list and the events tab with a few rows.
API_RESULT_PAGE_SIZE = {page_size}
API_RESULT_LIMIT = 1000
# Errors with their tracebacks in horizon.log (a 500 says why).
LOGGING = {{
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {{"console": {{"class": "logging.StreamHandler"}}}},
    "loggers": {{
        "django.request": {{"handlers": ["console"], "level": "WARNING"}},
        "horizon": {{"handlers": ["console"], "level": "WARNING"}},
        "openstack_dashboard": {{"handlers": ["console"], "level": "WARNING"}},
        "heat_dashboard": {{"handlers": ["console"], "level": "WARNING"}},
    }},
}}
"""


def render(**values):
    """The text of ``local_settings.py`` from ``keystone_url``, ``secret``,
    ``local_path`` (the ``local`` package's directory), ``static_root``
    and ``page_size`` (rows per table page)."""
    return SETTINGS.format(**dict({"page_size": 20}, **values))
