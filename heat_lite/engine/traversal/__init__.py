"""One traversal from start to finish.

``ops.StackOps`` starts a stack operation (create, update, delete,
rollback, cancel: a new traversal id, its records and its graph stored in
one transaction) and finishes it (complete or failed, and what follows,
such as a rollback). ``planner`` decides the record versions a traversal
converges on and builds its update and cleanup graphs (pure functions);
``graph_cache`` keeps the stored graphs per process; ``verify`` holds the
cleanup phase until a verified update's checks pass; ``nested`` stores
and converges the child stacks that resource plugins own.
"""
