"""Rollouts: one update over many stacks.

A rollout applies one PATCH (``update``) with one ``verify`` document to
the stacks a selector matched when it was created: a canary batch first,
then batches of ``batch_size`` at a time, stopping once more than
``max_failures`` targets failed. Each target is a verified update
(``engine.verify``): a target that fails its checks rolls back alone,
onto the very resources its update replaced.

It is built with taskflow, as Octavia builds its flows: ``flows`` makes
the flow from a factory function (gates between batches, a task per
batch with ``execute`` / ``revert``, a final task), persisted in our own
database (``db.flow_store``); ``target`` drives a batch's updates (the
targets in flight share one look at their stacks) and a stack's update
back; ``run`` holds the decisions between batches;
``runner`` runs the flows (a thread each) and takes over those of dead
engines; ``endpoint`` is the RPC side. Ownership is a fenced claim on the
rollout row (engine id + epoch, as resource locks), so an engine claimed
as dead can no longer move a rollout its successor resumed, and a target
records the update it started before starting it, so none is updated
twice.
"""
