"""The long in-place updates of OS::Nova::Server: resize, rebuild and
interface changes.

``plan`` turns the changed properties into steps (a change of
``networks`` between two lists of nics detaches and attaches
interfaces); ``advance`` runs them one after the other from
``check_update_complete``: each call starts the next Nova task or looks
at the one running and returns at once, so no worker waits. A step is a
small dict (it lives in the update's cookie) that records how far it
got. The replace-or-update decision (the ``*_update_policy`` properties)
is ``Server.needs_replace``'s; a step is only planned for a change that
is applied in place.
"""

import base64

from heat_lite.resources.openstack import client, server_user_data


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


def _nic_key(nic):
    return (nic.get("port"), nic.get("uuid"), nic.get("fixed_ip"))


def interfaces_step(old_nics, new_nics):
    """The step that detaches the nics only in ``old_nics`` and attaches
    those only in ``new_nics`` (Nova's request form, see _nics), or
    None when they are the same."""
    old = {_nic_key(n): n for n in old_nics}
    new = {_nic_key(n): n for n in new_nics}
    detach = [n for k, n in old.items() if k not in new]
    attach = [n for k, n in new.items() if k not in old]
    if not detach and not attach:
        return None
    return {
        "kind": "interfaces",
        "detach": detach,
        "attach": attach,
        "phase": "start",
    }


def plan(conn, new_props, prop_diff, interfaces=None, tenant="", configs=None):
    """The steps for the changes of ``prop_diff`` applied in place
    (``interfaces``: the step of a ``networks`` change, if any; ``tenant``:
    the project whose software configs the user data may name, kept in
    ``configs``, the plugin's ``services.software_configs``)."""
    steps = [interfaces] if interfaces else []
    if "flavor" in prop_diff:
        flavor = conn.compute.find_flavor(
            new_props["flavor"], ignore_missing=False
        )
        steps.append(
            {
                "kind": "resize",
                "flavor": new_props["flavor"],
                "flavor_id": flavor.id,
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


def advance(compute, server_id, steps):
    """Move the first unfinished step on; True once all are done."""
    while steps:
        if not _STEPS[steps[0]["kind"]](compute, server_id, steps[0]):
            return False
        steps.pop(0)
    return True


def _get(compute, server_id):
    return compute.find_server(server_id, ignore_missing=True)


def _resize(compute, server_id, step):
    if step["phase"] == "start":
        compute.resize_server(server_id, step["flavor_id"])
        step["phase"] = "resizing"
        return False
    server = _get(compute, server_id)
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


def _rebuild(compute, server_id, step):
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
        step["phase"] = "rebuilding"
        return False
    server = _get(compute, server_id)
    if server is None or server.status == "REBUILD":
        return False
    if server.status == "ERROR":
        raise client.Error(
            message="Rebuilding server failed, status '%s'" % server.status
        )
    return True


def _matching(interfaces, nic, taken):
    """The port of the server interface that ``nic`` made."""
    for iface in interfaces:
        if iface.port_id in taken:
            continue
        ips = [f.get("ip_address") for f in iface.fixed_ips or ()]
        if nic.get("port"):
            if iface.port_id == nic["port"]:
                return iface.port_id
        elif iface.net_id == nic.get("uuid") and (
            not nic.get("fixed_ip") or nic["fixed_ip"] in ips
        ):
            return iface.port_id
    return None


def _interfaces(compute, server_id, step):
    if step["phase"] == "start":
        current = list(compute.server_interfaces(server_id))
        gone = []
        for nic in step["detach"]:
            port_id = _matching(current, nic, gone)
            if port_id:
                compute.delete_server_interface(port_id, server=server_id)
                gone.append(port_id)
        for nic in step["attach"]:
            args = (
                {"port_id": nic["port"]}
                if nic.get("port")
                else {"net_id": nic["uuid"]}
            )
            if nic.get("fixed_ip"):
                args["fixed_ips"] = [{"ip_address": nic["fixed_ip"]}]
            compute.create_server_interface(server_id, **args)
        step.update(phase="detaching", gone=gone)
        return False
    attached = {i.port_id for i in compute.server_interfaces(server_id)}
    return not attached.intersection(step["gone"])


_STEPS = {"resize": _resize, "rebuild": _rebuild, "interfaces": _interfaces}
