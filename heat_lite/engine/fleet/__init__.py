"""Fleet operations: flows over stacks that outlive the call that
started them, owned by one engine and taken over by another when it
goes down.

``rollout/``: one update over many stacks, in batches; ``promotion/``: a
tested stack promoted onto another. Both run their flows (taskflow,
persisted in our database, ``db.flow_store``) in the threads of the
shared ``keeper``, which also takes over the flows of dead engines: a
fenced claim on the flow's row (engine id + epoch, as resource locks).
Their RPC endpoints are served on the ``[engine] topic`` with the
others (``endpoint.service.endpoints``).
"""
