"""Running graph nodes (topic ``[engine] worker_topic``).

``endpoint`` receives the ``check_resources`` casts; ``dispatch`` runs a
ready node (a ``node.Node``) in this thread or casts it to another engine,
and schedules the non-blocking polls. ``runner.NodeRunner`` runs one node
by wiring small collaborators: ``update_phase`` decides what an update
node does and ``changes`` does it (create, adopt, update, replace);
``cleanup_phase`` deletes what the goal no longer has and runs SUSPEND,
RESUME and CHECK; ``actions`` runs a plugin's handler and its polls;
``lease`` holds the record locks of this process, one ``Lease`` from take
to release; ``successors`` says what a finished node made ready;
``failures`` fails a node visibly; ``hooks`` are breakpoints, ``adopt``
reads adopt data, and ``caller`` keeps the token of the user who started
the operation for the length of it.
"""
