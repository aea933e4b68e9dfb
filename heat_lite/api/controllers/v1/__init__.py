"""The v1 route table: Heat's paths under /v1/{tenant}."""

from heat_lite.api import router
from heat_lite.api.controllers.v1 import resources, stacks, templates

# Paths that exist under a stack name as well as under name/id; a GET or
# POST there is redirected to the canonical URL.
_LOOKUP_SUBS = "resources|events|template|actions|environment|files|outputs"


def build():
    r = router.Router()
    base = "/v1/{tenant}/stacks"
    r.add(base, GET=stacks.list_stacks, POST=stacks.create_stack)
    r.add(base + "/detail", GET=stacks.list_stacks)
    lookup = {m: stacks.lookup for m in ("GET", "POST", "PUT", "PATCH",
                                         "DELETE")}
    r.add(base + "/{name}", **lookup)
    r.add(base + "/{name}/(?P<sub>%s)" % _LOOKUP_SUBS,
          GET=stacks.lookup, POST=stacks.lookup)
    one = base + "/{name}/{stack_id}"
    r.add(one, GET=stacks.show_stack, PUT=stacks.update_stack,
          PATCH=stacks.patch_stack, DELETE=stacks.delete_stack)
    r.add(one + "/actions", POST=stacks.stack_action)
    r.add(one + "/resources", GET=resources.list_resources)
    r.add(one + "/resources/{resource}", GET=resources.show_resource)
    r.add(one + "/resources/{resource}/versions",
          GET=resources.resource_versions)
    r.add(one + "/resources/{resource}/events",
          GET=resources.list_resource_events)
    r.add(one + "/events", GET=resources.list_events)
    r.add("/v1/{tenant}/validate", POST=templates.validate)
    r.add("/v1/{tenant}/template_versions", GET=templates.list_versions)
    r.add("/v1/{tenant}/template_versions/{version}/functions",
          GET=templates.list_functions)
    return r
