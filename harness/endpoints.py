"""The [engine] topic's endpoints as one object, for in-process tests.

The RPC server finds a method on whichever endpoint object has it
(``endpoint.service.endpoints``); a test that calls the engine directly
does the same through ``Engine``, instead of knowing which endpoint
answers which call.
"""

from heat_lite.engine.endpoint import service


class Engine:
    def __init__(self, stack_ops, services):
        self.endpoints = service.endpoints(stack_ops, services)

    def __getattr__(self, name):
        for endpoint in self.endpoints:
            method = getattr(endpoint, name, None)
            if method is not None and not name.startswith("_"):
                return method
        raise AttributeError(name)
