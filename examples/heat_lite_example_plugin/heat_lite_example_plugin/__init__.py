"""An example third-party resource plugin package for heat_lite."""
