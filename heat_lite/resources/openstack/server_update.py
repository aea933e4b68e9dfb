"""The long in-place updates of OS::Nova::Server: resize, rebuild and
interface changes.

``plan`` turns the changed properties into steps (a change of
``networks`` between two lists of nics detaches and attaches
interfaces: ``server_networks.interfaces_step``); ``advance`` runs
them one after the other from
``check_update_complete``: each call starts the next Nova task or looks
at the one running and returns at once, so no worker waits. A step is a
small dict (it lives in the update's cookie) that records how far it
got. The replace-or-update decision (the ``*_update_policy`` properties)
is ``Server.needs_replace``'s; a step is only planned for a change that
is applied in place.
"""

import base64

from heat_lite.resources.openstack import (
    client,
    server_networks,
    server_user_data,
)
from heat_lite.resources.openstack.client import sdk_exc


def _explicit(networks):
    """True for a list of nics (not empty, no ``allocate_network``)."""
    return bool(networks) and not any(
        n.get("allocate_network") for n in networks
    )


def replaces(old_props, new_props, prop_diff):
    """The changed properties that need a new server (Heat's policies,
    read from the new properties)."""
    changed = set(prop_diff)
    if new_props.get("flavor_update_policy") == "RESIZE":
        changed.discard("flavor")
    if new_props.get("image") and (
        new_props.get("image_update_policy") != "REPLACE"
    ):
        changed.discard("image")
    if new_props.get("user_data_update_policy") in ("IGNORE", "REBUILD"):
        changed.discard("user_data")
    # Interfaces attach and detach in place between two lists of nics;
    # to or from Nova's auto/none allocation the server is replaced.
    if _explicit(old_props.get("networks")) and _explicit(
        new_props.get("networks")
    ):
        changed.discard("networks")
    return changed


def plan(conn, new_props, prop_diff, interfaces=None, tenant="", configs=None):
    """The steps for the changes of ``prop_diff`` applied in place
    (``interfaces``: the step of a ``networks`` change, if any; ``tenant``:
    the project whose software configs the user data may name, kept in
    ``configs``, the plugin's ``services.software_configs``)."""
    steps = [interfaces] if interfaces else []
    if "flavor" in prop_diff:
        steps.append(
            {
                "kind": "resize",
                "flavor": new_props["flavor"],
                "flavor_id": client.find_id(
                    conn, "compute", "find_flavor", new_props["flavor"]
                ),
                "phase": "start",
            }
        )
    user_data = (
        "user_data" in prop_diff
        and new_props.get("user_data_update_policy") == "REBUILD"
    )
    if "image" in prop_diff or user_data:
        image = conn.image.find_image(new_props["image"], ignore_missing=False)
        step = {
            "kind": "rebuild",
            "image_id": image.id,
            "phase": "start",
            "preserve_ephemeral": new_props.get("image_update_policy")
            == "REBUILD_PRESERVE_EPHEMERAL",
        }
        if new_props.get("admin_pass"):
            step["admin_password"] = new_props["admin_pass"]
        if user_data:
            step["user_data"] = base64.b64encode(
                server_user_data.text(new_props, tenant, configs).encode()
            ).decode()
        steps.append(step)
    return steps


class Server:
    """What a step needs of its server: the compute proxy, its ID, a look
    at it (``look()``: the server, None when it is gone) and ``acted()``,
    said when a step has sent an action, so that later looks are taken
    after it (the plugin's ``server_board`` polls)."""

    def __init__(self, conn, server_id, look, acted):
        self.conn = conn
        self.compute = conn.compute
        self.id = server_id
        self.look = look
        self.acted = acted


def advance(server, steps):
    """Move the first unfinished step on; True once all are done."""
    while steps:
        if not _STEPS[steps[0]["kind"]](server, steps[0]):
            return False
        steps.pop(0)
    return True


def _resize(srv, step):
    compute, server_id = srv.compute, srv.id
    if step["phase"] == "start":
        compute.resize_server(server_id, step["flavor_id"])
        srv.acted()
        step["phase"] = "resizing"
        return False
    server = srv.look()
    if server is None:
        return False
    if step["phase"] == "resizing":
        # The task may not have started yet: ACTIVE still means "wait".
        if server.status in ("RESIZE", "ACTIVE"):
            return False
        if server.status != "VERIFY_RESIZE":
            raise client.Error(
                message="Resizing to '%s' failed, status '%s'"
                % (step["flavor"], server.status)
            )
        compute.confirm_server_resize(server_id)
        srv.acted()
        step["phase"] = "confirming"
        return False
    if server.status == "ACTIVE":
        return True
    if server.status == "VERIFY_RESIZE" or "resize" in (
        server.task_state or ""
    ):
        return False
    raise client.ResourceUnknownStatus(
        result="Confirm resize for server %s failed" % server_id,
        resource_status=server.status,
        status_reason="Unknown",
    )


def _rebuild(srv, step):
    compute, server_id = srv.compute, srv.id
    if step["phase"] == "start":
        args = {
            k: step[k] for k in ("admin_password", "user_data") if k in step
        }
        compute.rebuild_server(
            server_id,
            step["image_id"],
            preserve_ephemeral=step["preserve_ephemeral"],
            **args,
        )
        srv.acted()
        step["phase"] = "rebuilding"
        return False
    server = srv.look()
    if server is None or server.status == "REBUILD":
        return False
    if server.status == "ERROR":
        raise client.Error(
            message="Rebuilding server failed, status '%s'" % server.status
        )
    return True


def _attached(compute, server_id):
    return {i.port_id for i in compute.server_interfaces(server_id)}


def _attach(conn, server_id, step):
    """Attach the step's nics not attached yet (making each internal
    port first; ``step["made"]`` lists them for the server's data)."""
    while len(step["attached"]) < len(step["attach"]):
        nic = step["attach"][len(step["attached"])]
        if "create" in nic and "port" not in nic:
            nic["port"] = conn.network.create_port(**nic["create"]).id
            step["made"].append(nic["port"])
        if nic.get("port"):
            args = {"port_id": nic["port"]}
        else:
            args = {"net_id": nic["uuid"]}
            if nic.get("fixed_ip"):
                args["fixed_ips"] = [{"ip_address": nic["fixed_ip"]}]
        iface = conn.compute.create_server_interface(server_id, **args)
        step["attached"].append(iface.port_id)


def _interfaces(srv, step):
    """Detach, wait until detached, delete the detached internal ports,
    attach, wait until attached."""
    conn, compute, server_id = srv.conn, srv.compute, srv.id
    if step["phase"] == "start":
        for port_id in step["detach"]:
            try:
                compute.delete_server_interface(port_id, server=server_id)
            except sdk_exc.NotFoundException:
                pass  # detached (or deleted) already
        step["phase"] = "detaching"
        return False
    if step["phase"] == "detaching":
        if _attached(compute, server_id).intersection(step["detach"]):
            return False
        server_networks.delete_ports(conn, step["delete"])
        step["phase"] = "attaching"
    if step["phase"] == "attaching":
        _attach(conn, server_id, step)
        step["phase"] = "attached"
    return _attached(compute, server_id).issuperset(step["attached"])


_STEPS = {"resize": _resize, "rebuild": _rebuild, "interfaces": _interfaces}
