"""OS::Nova::Server, with Heat 27's property and attribute schemas.

Create boots the server through openstacksdk (which negotiates the
compute microversion), records its ID at once, and polls it: ACTIVE
completes, ERROR fails the resource with Nova's fault (``Went to status
ERROR due to "Message: ..., Code: ..."``, as Heat words it). Without a
``networks`` property the server gets Nova's ``auto`` network (Heat
fails such servers above microversion 2.36). ``name``, ``metadata`` and
``tags`` update in place; a new flavor resizes (and confirms) the server
and a new image rebuilds it, or each replaces it, as
``flavor_update_policy`` and ``image_update_policy`` say (see
``server_update``); ``user_data`` follows ``user_data_update_policy``;
a change of ``networks`` detaches and attaches interfaces (to or from
Nova's auto/none allocation it replaces the server). Delete polls
until Nova no longer shows the server; a server already gone counts as
deleted. Suspend and resume map to Nova's and poll for SUSPENDED and
ACTIVE; a stack check fails a server that is gone or not ACTIVE. A
poll that the cloud does not answer (a connection reset, a 503) is
polled again, never failed at once (``transient``).

``user_data`` is built per ``user_data_format`` by ``server_user_data``
(SOFTWARE_CONFIG: Heat's multipart message for cloud-init; a software
config's ID stands for its config).
"""

import base64
import json
import time

from keystoneauth1 import exceptions as ks_exc

from heat_lite.common import exception
from heat_lite.resources import base, transient
from heat_lite.resources.openstack import (
    client,
    live_nova,
    server_board,
    server_networks,
    server_schema,
    server_snapshot,
    server_update,
    server_user_data,
)
from heat_lite.resources.openstack import implicit_depends as implicit
from heat_lite.resources.openstack.client import sdk_exc


def _image_id(conn, value):
    """The ID of the image ``value`` names, None if Glance finds none or
    several."""
    try:
        return client.find_id(
            conn, "image", "find_image", value, ignore_missing=True
        )
    except sdk_exc.DuplicateResource:
        return None


# Statuses a server passes through on its way to ACTIVE (Heat's list).
DEFERRED = frozenset(
    [
        "BUILD",
        "HARD_REBOOT",
        "PASSWORD",
        "REBOOT",
        "RESCUE",
        "RESIZE",
        "REVERT_RESIZE",
        "SHUTOFF",
        "SUSPENDED",
        "VERIFY_RESIZE",
    ]
)
IN_PLACE = frozenset(
    [
        "name",
        "metadata",
        "tags",
        "flavor_update_policy",
        "image_update_policy",
        "user_data_update_policy",
        "software_config_transport",
    ]
)


class Server(base.Resource):
    """A Nova server; see the module docstring."""

    properties_schema = server_schema.PROPERTIES
    # Waits for the subnets of its networks (Heat's add_dependencies).
    implicit_depends = staticmethod(implicit.server)
    attributes_schema = server_schema.ATTRIBUTES
    _live = None
    _acted_at = None  # monotonic: the last action sent (_acted)
    _ports = None

    @property
    def default_poll_interval(self):
        return client.CONF.openstack.poll_interval

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        for i, net in enumerate(props.get("networks") or []):
            _validate_network(net, "%s.networks[%d]" % (path, i))
        return props

    def _conn(self):
        return client.connection(self)

    def image_references(self, props=None):
        """The images the properties name, a name resolved to its ID as
        the create and the rebuild resolve it (``find_image`` as the
        stack's identity): so an image shared from another project, or
        one of that project's images named by name, is kept for this
        stack by image retention. A hidden image's name resolves too
        (openstacksdk's ``find_image`` asks again with
        ``os_hidden=true``), so the use revives it. A name Glance does
        not resolve (no image, several; the cloud unreachable) stays a
        name, which ``db.image_holds`` counts for the project's own
        images of that name."""
        values = super().image_references(props)
        if not values:
            return values
        try:
            conn = self._conn()
            return [_image_id(conn, v) or v for v in values]
        except (
            client.CloudUnavailable,
            sdk_exc.SDKException,
            ks_exc.ClientException,
        ):
            return values

    # Create --------------------------------------------------------------
    def _internal_ports(self):
        return list(self.data().get(server_networks.INTERNAL) or ())

    def _set_internal_ports(self, port_ids):
        if port_ids != self._internal_ports():
            self.data_set(server_networks.INTERNAL, list(port_ids))

    def _add_internal_port(self, port_id):
        self._set_internal_ports(self._internal_ports() + [port_id])

    def _server_name(self, props=None):
        return (props or self.properties).get(
            "name"
        ) or self.physical_resource_name()

    def _create_args(self):
        props = self.properties
        conn = self._conn()
        args = {
            "name": self._server_name(),
            "flavor_id": client.find_id(
                conn, "compute", "find_flavor", props["flavor"]
            ),
            "networks": server_networks.create_nics(
                conn,
                props.get("networks"),
                self.name,
                props.get("security_groups"),
                self._add_internal_port,
            ),
            "metadata": serialize_metadata(props.get("metadata") or {}),
        }
        if props.get("image"):
            args["image_id"] = client.find_id(
                conn, "image", "find_image", props["image"]
            )
        user_data = server_user_data.text(
            props,
            self.stack.get("tenant") or "",
            self.services.software_configs,
        )
        if user_data:
            args["user_data"] = base64.b64encode(user_data.encode()).decode()
        if props.get("security_groups"):
            args["security_groups"] = [
                {"name": sg} for sg in props["security_groups"]
            ]
        for prop, arg in (
            ("key_name", "key_name"),
            ("availability_zone", "availability_zone"),
            ("config_drive", "config_drive"),
            ("admin_pass", "admin_password"),
            ("diskConfig", "disk_config"),
            ("reservation_id", "reservation_id"),
            ("scheduler_hints", "scheduler_hints"),
            ("tags", "tags"),
        ):
            if props.get(prop) not in (None, "", [], {}):
                args[arg] = props[prop]
        return args

    def handle_create(self):
        server = self._conn().compute.create_server(**self._create_args())
        self._acted()
        self.resource_id_set(server.id)
        return server.id

    @transient.polled
    def check_create_complete(self, server_id):
        server = self._polled()
        if server is None:
            return False
        return _active(server)

    # Update --------------------------------------------------------------
    def needs_replace(self, new_props, prop_diff):
        """Replace for changes Nova cannot apply in place (``networks``
        to or from auto/none) and as the ``*_update_policy`` properties
        say."""
        return bool(
            server_update.replaces(
                self.properties, new_props, set(prop_diff) - IN_PLACE
            )
        )

    def handle_update(self, new_props, prop_diff):
        compute = self._conn().compute
        if "name" in prop_diff:
            compute.update_server(
                self.resource_id, name=self._server_name(new_props)
            )
        if "metadata" in prop_diff:
            wanted = serialize_metadata(new_props.get("metadata") or {})
            compute.set_server_metadata(self.resource_id, **wanted)
            old = compute.get_server_metadata(self.resource_id).metadata
            gone = sorted(set(old or {}) - set(wanted))
            if gone:
                compute.delete_server_metadata(self.resource_id, gone)
        if "tags" in prop_diff:
            server = compute.get_server(self.resource_id)
            server.set_tags(compute, list(new_props.get("tags") or []))
        interfaces = None
        if "networks" in prop_diff:
            interfaces = server_networks.interfaces_step(
                self._conn(),
                self.resource_id,
                self.properties.get("networks") or [],
                new_props.get("networks") or [],
                server=self.name,
                security_groups=new_props.get("security_groups"),
                internal=self._internal_ports(),
            )
        steps = server_update.plan(
            self._conn(),
            new_props,
            set(prop_diff),
            interfaces,
            tenant=self.stack.get("tenant") or "",
            configs=self.services.software_configs,
        )
        self.properties = new_props
        return {"steps": steps}

    @transient.polled
    def check_update_complete(self, cookie):
        steps = list(cookie["steps"])
        try:
            done = server_update.advance(
                server_update.Server(
                    self._conn(), self.resource_id, self._polled, self._acted
                ),
                cookie["steps"],
            )
        finally:
            self._record_port_changes(steps)
        if done:
            self._live = None
        return done

    def _record_port_changes(self, steps):
        """Keep the internal ports of the data in step with what the
        interface steps made and deleted."""
        ports = self._internal_ports()
        for step in steps:
            if step["kind"] == "interfaces":
                if step["phase"] in ("attaching", "attached"):
                    ports = [p for p in ports if p not in step["delete"]]
                ports += [p for p in step["made"] if p not in ports]
        self._set_internal_ports(ports)

    # Suspend, resume, check --------------------------------------------
    def _existing(self, action):
        """The server, for an action that needs it to exist."""
        if not self.resource_id:
            raise client.Error(
                message="Cannot %s %s, resource_id not set"
                % (action, self.name)
            )
        server = self._get()
        if server is None:
            raise client.NotFound(
                message="Failed to find server %s" % self.resource_id
            )
        return server

    def handle_suspend(self):
        if self._existing("suspend").status != "SUSPENDED":
            self._conn().compute.suspend_server(self.resource_id)
            self._acted()
        return True

    @transient.polled
    def check_suspend_complete(self, cookie):
        server = self._polled()
        if server is None:
            return False
        if server.status in DEFERRED | {"ACTIVE"}:
            return server.status == "SUSPENDED"
        raise client.ResourceUnknownStatus(
            result="Suspend of server %s failed" % server.name,
            resource_status=server.status,
            status_reason="Unknown",
        )

    def handle_resume(self):
        if self._existing("resume").status != "ACTIVE":
            self._conn().compute.resume_server(self.resource_id)
            self._acted()
        return True

    @transient.polled
    def check_resume_complete(self, cookie):
        server = self._polled()
        return server is not None and _active(server)

    def handle_check(self):
        """A server deleted, stopped or broken out of band fails the
        check (and the next update replaces it)."""
        if not self.resource_id:
            return
        server = self._get()
        if server is None:
            raise client.NotFound(
                message="The server (%s) could not be found."
                % self.resource_id
            )
        if server.status != "ACTIVE":
            raise client.Error(
                message="'status': expected 'ACTIVE', got '%s'" % server.status
            )

    # Drift (live_nova) ---------------------------------------------------
    def live_state(self):
        return live_nova.server_state(self)

    live_expectations = staticmethod(live_nova.server_expectations)

    # Snapshots (server_snapshot) ----------------------------------------
    def handle_snapshot(self):
        return server_snapshot.start(self)

    @transient.polled
    def check_snapshot_complete(self, image_id):
        return server_snapshot.done(self, image_id)

    def handle_delete_snapshot(self, entry):
        server_snapshot.delete(self, entry)

    @staticmethod
    def restore_properties(entry):
        return server_snapshot.restore_properties(entry)

    # Delete --------------------------------------------------------------
    def handle_delete(self):
        if not self.resource_id:
            self._delete_internal_ports()
            return False
        try:
            self._conn().compute.delete_server(self.resource_id)
        except sdk_exc.NotFoundException:
            return False
        self._acted()
        return True

    @transient.polled
    def check_delete_complete(self, deleting):
        if not deleting:
            self._delete_internal_ports()
            return True
        server = self._polled()
        if server is None or server.status == "DELETED":
            self._delete_internal_ports()
            return True
        if server.status == "SOFT_DELETED":
            self._conn().compute.delete_server(self.resource_id, force=True)
            self._acted()
        elif server.status == "ERROR" and server.task_state != "deleting":
            fault = server.fault or {}
            raise client.ResourceInError(
                resource_status="ERROR",
                status_reason="Server %s delete failed: (%s) %s"
                % (
                    server.name,
                    fault.get("code"),
                    fault.get("message", "Unknown"),
                ),
            )
        return False

    def _delete_internal_ports(self):
        """The server's own ports go with it (once it is gone: a port
        still bound would only be unbound)."""
        if self._internal_ports():
            server_networks.delete_ports(self._conn(), self._internal_ports())
            self.data_delete(server_networks.INTERNAL)

    # Attributes ----------------------------------------------------------
    def _get(self):
        """The server (cached for this action), or None if it is gone."""
        try:
            self._live = self._conn().compute.get_server(self.resource_id)
        except sdk_exc.NotFoundException:
            self._live = None
        return self._live

    def _acted(self):
        """An action was just sent: its polls must not be answered by a
        look at Nova taken before (``server_board``)."""
        self._acted_at = time.monotonic()

    def _polled(self):
        """The server for a completion poll, from one list of the
        project's servers shared by every poll of this process
        (``server_board``); None once it is gone."""
        if self._acted_at is None:
            # Polls taken over from another engine: any look from now on
            # is after its action.
            self._acted()
        self._live = server_board.board(self._conn()).get(
            self.resource_id,
            self._acted_at,
            self.default_poll_interval / 2,
        )
        return self._live

    def _server(self):
        if not self.resource_id:
            return None
        return self._live if self._live is not None else self._get()

    def _ports_by_mac(self, server):
        """{MAC: {"port", "network", "subnets"}} of the server's ports
        (Nova's addresses name a port only by its MAC)."""
        if self._ports is None:
            self._ports = {
                port.get("mac_address"): {
                    "port": port.get("id"),
                    "network": port.get("network_id"),
                    "subnets": [
                        {"id": ip["subnet_id"]}
                        for ip in port.get("fixed_ips") or ()
                    ],
                }
                for port in _server_ports(self._conn(), server.id)
            }
        return self._ports

    def _port_of(self, server, addr):
        mac = addr.get("OS-EXT-IPS-MAC:mac_addr")
        return self._ports_by_mac(server).get(mac) or {}

    def _resolve_attribute(self, name):
        if name == "name":
            return self._server_name()
        server = self._server()
        if server is None:
            return "" if name == "first_address" else None
        if name == "first_address":
            return first_address(server.addresses)
        if name == "networks":
            return self._networks(server)
        if name == "addresses":
            return self._addresses(server)
        if name == "instance_name":
            return server.instance_name
        if name == "accessIPv4":
            return server.access_ipv4
        if name == "accessIPv6":
            return server.access_ipv6
        if name == "tags":
            return server.tags
        return None

    def _net_ids(self, server):
        """{network name: network id} of the networks the server is on."""
        ids = {}
        for net_name, addrs in (server.addresses or {}).items():
            for addr in addrs:
                network = self._port_of(server, addr).get("network")
                if network:
                    ids[net_name] = network
        return ids

    def _networks(self, server):
        nets = {}
        ids = self._net_ids(server)
        for net_name, addrs in (server.addresses or {}).items():
            ips = [a["addr"] for a in addrs]
            nets[net_name] = ips
            if net_name in ids:
                nets[ids[net_name]] = ips
        return nets

    def _addresses(self, server):
        """Nova's addresses with each entry's port, network and subnets
        (under both the network name and its ID, as Heat gives them)."""
        result = {}
        ids = self._net_ids(server)
        for net_name, addrs in (server.addresses or {}).items():
            entries = [
                dict(addr, **self._port_of(server, addr)) for addr in addrs
            ]
            result[net_name] = entries
            if net_name in ids:
                result[ids[net_name]] = entries
        return result

    def _show_resource(self):
        server = self._server()
        return server.to_dict() if server is not None else None


def _server_ports(conn, server_id):
    """Neutron's JSON of the server's ports (a raw list: openstacksdk's
    Port objects cost more CPU than the request, and only four fields
    are read)."""
    response = conn.network.get(
        "/ports",
        params={"device_id": server_id},
        headers={"Accept": "application/json"},
    )
    sdk_exc.raise_from_response(response)
    return response.json().get("ports") or []


def _validate_network(net, where):
    """Heat's checks of one entry of ``networks``."""
    given = {k for k, v in net.items() if v is not None}
    if "allocate_network" in given and given - {"allocate_network"}:
        raise exception.StackValidationFailed(
            path=where,
            msg="Can not specify 'allocate_network' "
            "with other keys of networks at the same time.",
        )
    if not given & {"network", "uuid", "port", "subnet", "allocate_network"}:
        raise exception.StackValidationFailed(
            path=where,
            msg='One of the properties "network", "port", '
            '"allocate_network" or "subnet" should be set for the '
            "specified network of server.",
        )
    if "fixed_ip" in given and "port" in given:
        raise exception.StackValidationFailed(
            path=where,
            msg="Cannot define the following properties at the same "
            'time: "networks/fixed_ip", "networks/port".',
        )
    if "floating_ip" in given:
        raise exception.StackValidationFailed(
            path="%s.floating_ip" % where,
            msg="floating_ip is not supported yet",
        )


def serialize_metadata(metadata):
    """Nova takes strings only: other values are sent as JSON."""
    return {
        k: v if isinstance(v, str) else json.dumps(v)
        for k, v in metadata.items()
    }


def first_address(addresses):
    """The first address of the last network by name (Heat's choice)."""
    for net_name in sorted(addresses or {}, reverse=True):
        if addresses[net_name]:
            return addresses[net_name][0]["addr"]
    return ""


def _active(server):
    """True once ACTIVE; raise if the server failed or is in a state
    it will not leave by itself."""
    if server.status == "ACTIVE":
        return True
    if server.status in DEFERRED:
        return False
    if server.status == "ERROR":
        fault = server.fault or {}
        raise client.ResourceInError(
            resource_status="ERROR",
            status_reason="Message: %s, Code: %s"
            % (fault.get("message", "Unknown"), fault.get("code", "Unknown")),
        )
    raise client.ResourceUnknownStatus(
        result="Server is not active",
        resource_status=server.status,
        status_reason="Unknown",
    )
