"""gunicorn entry point for one service of the test cloud.

Imported by gunicorn inside the test cloud's venv (``--pythonpath`` names
this directory), not by heat_lite. Nova and Neutron parse ``sys.argv``
while building their WSGI application, where oslo.config would see
gunicorn's own arguments; so the argument list is reset to the service's
program name first. The service's config directory comes in the
environment (``OS_<SERVICE>_CONFIG_DIR``, set by the launcher), and
``MINICLOUD_WSGI_MODULE`` names the module that builds ``application``.
"""

import importlib
import os
import sys

sys.argv = [os.environ.get("MINICLOUD_PROG", "minicloud")]
application = importlib.import_module(
    os.environ["MINICLOUD_WSGI_MODULE"]
).application
