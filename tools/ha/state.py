"""What one piece of the substrate recorded: ``<DIR>/<piece>/state.json``.

A ``Piece`` has what ``tools.minicloud.processes`` needs of a layout
(``dir``, ``prefix``, ``pids``, ``path()``, ``save()``), so the pieces
are started and stopped by that module: each daemon in a session of its
own, its PID written to the state file the moment it is started, and
``stop_all`` signals those process groups (and only ours: the marker in
their environment) — also when the runner that started them was killed.
``data`` holds what the piece needs to find its other parts again
(namespaces, addresses, URLs).
"""

import json
import os
import uuid


class Piece:
    def __init__(self, root, name):
        self.root = os.path.abspath(root)
        self.name = name
        self.dir = os.path.join(self.root, name)
        self.prefix = "ha%s-%s" % (uuid.uuid4().hex[:8], name)
        self.pids = {}
        self.data = {}
        self.timings = {}
        if os.path.exists(self.state_file):
            with open(self.state_file) as f:
                saved = json.load(f)
            self.prefix = saved["prefix"]
            self.pids = saved["pids"]
            self.data = saved["data"]
            self.timings = saved.get("timings", {})

    @property
    def state_file(self):
        return os.path.join(self.dir, "state.json")

    @property
    def recorded(self):
        return os.path.exists(self.state_file)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def save(self):
        os.makedirs(self.path("log"), exist_ok=True)
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(
                {
                    "prefix": self.prefix,
                    "pids": self.pids,
                    "data": self.data,
                    "timings": self.timings,
                },
                f,
                indent=2,
                sort_keys=True,
            )
        os.replace(tmp, self.state_file)

    def forget(self):
        """After ``down``: nothing of this piece runs any more."""
        if os.path.exists(self.state_file):
            os.unlink(self.state_file)
        self.pids = {}
        self.data = {}
