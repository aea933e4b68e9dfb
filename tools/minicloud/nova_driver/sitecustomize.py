"""Lets nova-compute of the test cloud load ``nova.virt.minicloud_nova``.

Nova loads its virt driver only from ``nova.virt``; this folder is on
nova-compute's PYTHONPATH, so Python imports this module at start-up,
and it maps that one module name to ``minicloud_nova.py`` beside it
(nothing of Nova is imported here: the name is resolved when Nova asks).
"""

import importlib.abc
import importlib.util
import os
import sys

_NAME = "nova.virt.minicloud_nova"
_FILE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "minicloud_nova.py"
)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _NAME:
            return None
        return importlib.util.spec_from_file_location(fullname, _FILE)


sys.meta_path.insert(0, _Finder())
