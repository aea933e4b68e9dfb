"""What an app needs before any engine, API or database is involved.

Pure parts the app service composes: reading a push delivered by a git
server (``webhook``), deciding whether an app may name a git URL
(``sources``), fetching exactly one commit (``source``) and running a
bounded command (``process``). Nothing here imports the API, the database,
the engine or the resource plugins (tests/unit/test_layering.py).
"""
