"""The engine endpoint (topic ``[engine] topic``): what the API calls.

Each call checks its request inside the caller's project, reads the
database or starts a traversal (``traversal.ops``), and answers in Heat's
engine format (``views``). Starting stack operations is in ``service``;
the reads, the resource calls (metadata, signals, marks), the catalog
(validation, template versions, resource types, services), software
configs, previews, abandon and export each have a module of their own;
``goals`` checks the new goal of an update (rollouts use it too).
Nothing here runs a graph node: that is ``worker``'s job.
"""
