"""What an app needs before any engine, API or database is involved.

Pure parts the app service composes: reading a push delivered by a git
server (``webhook``, with ``refs`` for the names in it), deciding whether
an app may name a git URL (``sources``), fetching exactly one commit
(``source``), running a bounded command (``process``) and keeping each
build's files in a directory of its own (``scratch``). The builders that
turn a checkout into an image are ``heat_lite.builders``. Nothing here
imports the API, the database, the engine or the resource plugins
(tests/unit/test_layering.py).
"""
