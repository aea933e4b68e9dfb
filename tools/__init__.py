"""Developer tools of heat_lite (not shipped in the wheel)."""
