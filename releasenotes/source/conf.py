"""Sphinx configuration of heat_lite's release notes (``tox -e
releasenotes``): reno reads the notes in ``releasenotes/notes`` from the
git history."""

project = "heat_lite release notes"
copyright = "heat_lite authors"
author = "heat_lite authors"

extensions = ["reno.sphinxext"]

master_doc = "index"
exclude_patterns = ["_build"]
templates_path = []
html_static_path = []
html_theme = "alabaster"
