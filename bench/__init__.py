"""Benchmark harness of heat_lite (issue 7).

``python -m bench`` starts heat_lite itself in a chosen topology (the
all-in-one ``heat-lite-all`` on SQLite, or ``heat-lite-api`` plus
``heat-lite-engine --workers N`` on PostgreSQL or MariaDB over RabbitMQ),
drives it over the REST API the way a client does, and writes what a stack
costs: seconds per operation, and per resource the SQL statements,
transactions, RPC casts and calls and events that the processes' own cost
counters recorded. See ``bench/README.rst``.
"""
