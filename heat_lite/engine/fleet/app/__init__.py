"""Apps (doc/specs/apps.md): a push becomes a build, an image and a
verified update of the branch's stack. ``endpoint`` serves the apps'
RPC calls."""
