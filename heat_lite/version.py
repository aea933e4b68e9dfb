"""The version string reported by build_info and the version document."""

from importlib import metadata


def version_string():
    """Return the installed distribution version, or "unknown"."""
    try:
        return metadata.version("heat_lite")
    except metadata.PackageNotFoundError:
        return "unknown"
