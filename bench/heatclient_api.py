"""The benchmark's stack client over python-heatclient, for the
comparison with Heat: both services are driven by the same client
library, the one ``openstack stack`` uses, over the same Heat API v1.

It has ``bench.api.StackClient``'s interface (create, update, delete,
status, the waits, ``last_accept``, a ``Tally`` of requests and polls),
so the scenarios of ``bench.scenarios`` and ``bench.throughput`` run on
it unchanged. The session sends ``X-Auth-User`` and ``X-Auth-Project``:
heat_lite takes the project from the URL, Heat's noauth middleware from
that header.
"""

import time

from heatclient import client as heat_client
from heatclient import exc as heat_exc
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import noauth, session

from bench import api


class HeatClientStackClient(api.StackClient):
    """``StackClient`` whose requests go through python-heatclient."""

    def __init__(
        self,
        endpoint,
        tally=None,
        poll_floor=0.01,
        user="bench",
        project="demo",
    ):
        super().__init__(endpoint, tally, poll_floor, user)
        sess = session.Session(
            auth=noauth.NoAuth(),
            additional_headers={
                "X-Auth-User": user,
                "X-Auth-Project": project,
            },
            timeout=api.REQUEST_TIMEOUT,
        )
        self.heat = heat_client.Client(
            "1", session=sess, endpoint_override=endpoint
        )

    def _call(self, method, what, fn, *args, **kwargs):
        start = time.monotonic()
        try:
            result = fn(*args, **kwargs)
        except heat_exc.HTTPNotFound:
            self.tally.add(method, time.monotonic() - start)
            return None
        except (heat_exc.BaseException, ks_exc.ClientException) as exc:
            raise api.OpFailed("%s %s: %s" % (method, what, exc)) from None
        elapsed = time.monotonic() - start
        self.tally.add(method, elapsed)
        if method != "GET":
            self.last_accept = elapsed
        return result

    def create(self, name, template):
        body = self._call(
            "POST",
            name,
            self.heat.stacks.create,
            stack_name=name,
            template=template,
            disable_rollback=True,
        )
        if body is None:
            raise api.OpFailed("POST %s: HTTP 404" % name)
        return name, body["stack"]["id"]

    def update(self, stack, template):
        self._call(
            "PUT",
            stack[0],
            self.heat.stacks.update,
            "%s/%s" % stack,
            template=template,
        )

    def delete(self, stack):
        self._call(
            "DELETE", stack[0], self.heat.stacks.delete, "%s/%s" % stack
        )

    def status(self, stack):
        body = self._call(
            "GET",
            stack[0],
            self.heat.stacks.get,
            "%s/%s" % stack,
            resolve_outputs=False,
        )
        if body is None:
            return None
        return body.stack_status, body.stack_status_reason

    def list_stacks(self, name=None):
        filters = {"name": name} if name else {}
        stacks = self._call(
            "GET",
            "stacks",
            lambda: list(self.heat.stacks.list(filters=filters)),
        )
        return [(s.stack_name, s.id) for s in stacks or []]

    def resource_versions(self, stack, resource):
        """heat_lite's record versions are no Heat API: the concurrent
        update's ``converged`` is left unknown on both services."""
        raise api.OpFailed("not in the Heat API")
