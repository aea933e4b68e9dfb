"""Promotions: a tested stack's template, files and environment (its
snapshot, with an overlay) applied onto another stack, gated by checks,
undone in one step.

``plan`` resolves a promotion and its refusals in the call that creates
it (``preview`` is its dry run); ``driver`` applies, gates and undoes it,
in the flows of ``flows``; ``runner`` runs them and takes over those of
dead engines with the fleet's ``keeper``; ``endpoint`` is the RPC side.
"""
