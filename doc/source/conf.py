"""Sphinx configuration of heat_lite's documentation (``tox -e docs``).

The references are generated, never written by hand: the REST API from
the same route tree as the OpenAPI document, the resource types from the
plugin registry (``_ext/heat_lite_docs.py``), the options and policy
rules from oslo.config's and oslo.policy's own extensions.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

project = "heat_lite"
copyright = "heat_lite authors"
author = "heat_lite authors"

extensions = [
    "oslo_config.sphinxext",
    "oslo_policy.sphinxext",
    "heat_lite_docs",
]

master_doc = "index"
exclude_patterns = ["_build"]
templates_path = []
pygments_style = "sphinx"
html_theme = "alabaster"
html_theme_options = {
    "description": "A lean, fast Heat-compatible orchestration service"
}
html_static_path = []
