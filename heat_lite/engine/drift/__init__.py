"""Property-level drift detection (issue 32 item 1).

``compare``
    Pure: a record's converged properties against a plugin's
    ``live_state``; only what the template set (or the plugin observes
    beyond its properties) is compared.
``detect``
    One detection of a stack tree, run on a worker (``detect_drift``
    cast): each COMPLETE record's plugin reads its live state, nested
    stacks are walked, the report is stored (``db.drift``).
``endpoint``
    The ``[engine] topic`` calls: start a detection, show the last one.
"""
