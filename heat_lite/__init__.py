"""heat_lite: a lean, Heat-compatible orchestration service."""
