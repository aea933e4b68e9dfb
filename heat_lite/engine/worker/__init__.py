"""Running graph nodes (topic ``[engine] worker_topic``).

``endpoint`` receives the ``check_resources`` casts; ``dispatch`` runs a
ready node in this thread or casts it to another engine, and schedules
the non-blocking polls; ``node.NodeRunner`` runs one node (make a record
match its goal, or delete it) with ``actions`` (a plugin's handler and
its completion polls), ``cleanup_phase`` (cleanup nodes and the SUSPEND,
RESUME and CHECK walks), ``adopt``, ``hooks`` (breakpoints) and
``failures`` (failing a node visibly). ``caller`` keeps the token of the
user who started the operation for the length of it.
"""
