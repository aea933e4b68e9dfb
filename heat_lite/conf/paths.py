"""Where heat_lite keeps its files when nothing else is configured."""

import os


def data_dir():
    """Return $XDG_DATA_HOME/heat_lite (default ~/.local/share/heat_lite)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "heat_lite")
