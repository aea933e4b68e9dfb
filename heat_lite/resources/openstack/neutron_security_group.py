"""OS::Neutron::SecurityGroup and OS::Neutron::SecurityGroupRule, with
Heat 27's schemas.

The group is made, then its ``rules`` in one bulk request. Neutron gives
a new group two egress rules (any IPv4, any IPv6); as in Heat, a
``rules`` list with an egress rule of its own replaces them, and one
without keeps them. An update of ``rules`` reconciles: rules no longer
wanted are deleted, missing ones made. Deleting the group deletes its
rules with it.
"""

from heat_lite.common import exception
from heat_lite.resources import constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import neutron
from heat_lite.resources.openstack.client import sdk_exc

PROTOCOLS = list(range(256)) + [
    "ah",
    "dccp",
    "egp",
    "esp",
    "gre",
    "icmp",
    "icmpv6",
    "igmp",
    "ipv6-encap",
    "ipv6-frag",
    "ipv6-icmp",
    "ipv6-nonxt",
    "ipv6-opts",
    "ipv6-route",
    "ospf",
    "pgm",
    "rsvp",
    "sctp",
    "tcp",
    "udp",
    "udplite",
    "vrrp",
]
# Protocols whose port range holds an ICMP type and code (no order).
ICMP = ("icmp", "icmpv6", "ipv6-icmp")
DEFAULT_EGRESS = [
    {"direction": "egress", "ethertype": "IPv4"},
    {"direction": "egress", "ethertype": "IPv6"},
]
# What makes two rules the same rule.
RULE_KEY = (
    "direction",
    "ethertype",
    "protocol",
    "port_range_min",
    "port_range_max",
    "remote_group_id",
    "remote_ip_prefix",
)
_PORT = [constraints.Range(0, 65535)]

RULE_SCHEMA = {
    "direction": p.Schema(
        p.STRING,
        "The direction in which the security group rule is applied.",
        default="ingress",
        constraints=[constraints.AllowedValues(["ingress", "egress"])],
    ),
    "ethertype": p.Schema(
        p.STRING,
        "Ethertype of the traffic.",
        default="IPv4",
        constraints=[constraints.AllowedValues(["IPv4", "IPv6"])],
    ),
    "port_range_min": p.Schema(
        p.INTEGER,
        "The minimum port number in the "
        "range that is matched by the security group "
        "rule.",
        constraints=_PORT,
    ),
    "port_range_max": p.Schema(
        p.INTEGER,
        "The maximum port number in the "
        "range that is matched by the security group "
        "rule.",
        constraints=_PORT,
    ),
    "protocol": p.Schema(
        p.STRING,
        "The protocol that is matched by the security group rule. "
        "If not specified, all protocols will be matched.",
        constraints=[constraints.AllowedValues(PROTOCOLS)],
    ),
    "remote_mode": p.Schema(
        p.STRING,
        "Whether to specify a remote group or a remote IP prefix.",
        default="remote_ip_prefix",
        constraints=[
            constraints.AllowedValues(["remote_ip_prefix", "remote_group_id"])
        ],
    ),
    "remote_group_id": p.Schema(
        p.STRING,
        "The remote group ID to be associated with this security "
        "group rule. If no value is specified then this rule will use this "
        "security group for the remote_group_id.",
        constraints=[constraints.CustomConstraint("neutron.security_group")],
    ),
    "remote_ip_prefix": p.Schema(
        p.STRING,
        "The remote IP prefix (CIDR) to be associated with this "
        "security group rule.",
        constraints=[constraints.CustomConstraint("net_cidr")],
    ),
    "description": p.Schema(
        p.STRING, "Description of the security group rule."
    ),
}


class SecurityGroup(neutron.NeutronResource):
    """A Neutron security group and its rules."""

    entity = "security_group"
    collection = "security-groups"
    local_props = ("rules",)
    properties_schema = {
        "name": p.Schema(
            p.STRING,
            "A string specifying a symbolic name for "
            "the security group, which is not required to be "
            "unique.",
            update_allowed=True,
        ),
        "description": p.Schema(
            p.STRING, "Description of the security group.", update_allowed=True
        ),
        "rules": p.Schema(
            p.LIST,
            "List of security group rules.",
            default=[],
            update_allowed=True,
            schema=p.Schema(p.MAP, schema=RULE_SCHEMA),
        ),
        "stateful": p.Schema(
            p.BOOLEAN,
            "Whether to create this security group as stateful or stateless.",
            update_allowed=True,
        ),
    }
    attributes_schema = {}

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)
        if props.get("name") == "default":
            raise exception.StackValidationFailed(
                path=path,
                msg='Security groups cannot be assigned the name "default".',
            )
        return props

    def handle_create(self):
        done = super().handle_create()
        rules = self.properties.get("rules") or []
        if any(r["direction"] == "egress" for r in rules):
            self._delete_rules(lambda rule: rule["direction"] == "egress")
        self._create_rules([self._rule(r) for r in rules])
        return done

    def handle_update(self, new_props, prop_diff):
        done = super().handle_update(new_props, set(prop_diff) - {"rules"})
        if "rules" in prop_diff:
            self._reconcile(new_props.get("rules") or [])
        return done

    # Rules ---------------------------------------------------------------
    def _rule(self, rule):
        """Neutron's form of a rule of the ``rules`` property."""
        body = {
            k: v
            for k, v in rule.items()
            if v is not None and k != "remote_mode"
        }
        body["security_group_id"] = self.resource_id
        if rule.get("remote_mode") == "remote_group_id":
            body.pop("remote_ip_prefix", None)
            body.setdefault("remote_group_id", self.resource_id)
        else:
            body.pop("remote_group_id", None)
        return body

    @staticmethod
    def _key(rule):
        return tuple(
            None if rule.get(k) is None else str(rule[k]) for k in RULE_KEY
        )

    def _current_rules(self):
        self._live = None
        return self._fetch().get("security_group_rules") or []

    def _create_rules(self, rules):
        if rules:
            response = self._api().request(
                "/security-group-rules",
                "POST",
                json={"security_group_rules": rules},
            )
            sdk_exc.raise_from_response(response)

    def _delete_rule(self, rule_id):
        response = self._api().request(
            "/security-group-rules/" + rule_id, "DELETE"
        )
        if response.status_code != 404:
            sdk_exc.raise_from_response(response)

    def _delete_rules(self, wanted):
        for rule in self._current_rules():
            if wanted(rule):
                self._delete_rule(rule["id"])

    def _reconcile(self, rules):
        if not any(r["direction"] == "egress" for r in rules):
            rules = list(rules) + DEFAULT_EGRESS
        desired = {self._key(r): r for r in map(self._rule, rules)}
        current = {self._key(r): r for r in self._current_rules()}
        for key, rule in current.items():
            if key not in desired:
                self._delete_rule(rule["id"])
        self._create_rules([r for k, r in desired.items() if k not in current])


class SecurityGroupRule(neutron.NeutronResource):
    """One rule of a security group, a resource of its own (Heat's
    ``OS::Neutron::SecurityGroupRule``): ``security_group`` and
    ``remote_group`` by name or ID. Nothing changes in place: Neutron
    has no update of a rule, so any change makes a new rule."""

    entity = "security_group_rule"
    collection = "security-group-rules"
    local_props = neutron.NeutronResource.local_props + (
        "security_group",
        "remote_group",
    )
    properties_schema = {
        "security_group": p.Schema(
            p.STRING,
            "Security group name or ID to add rule.",
            required=True,
            constraints=[
                constraints.CustomConstraint("neutron.security_group")
            ],
        ),
        "description": RULE_SCHEMA["description"],
        "direction": RULE_SCHEMA["direction"],
        "ethertype": RULE_SCHEMA["ethertype"],
        "port_range_min": RULE_SCHEMA["port_range_min"],
        "port_range_max": RULE_SCHEMA["port_range_max"],
        # Unlike a rule of a group's ``rules``, tcp when not given.
        "protocol": p.Schema(
            p.STRING,
            "The protocol that is matched by the security group rule.",
            default="tcp",
            constraints=[constraints.AllowedValues(PROTOCOLS)],
        ),
        "remote_group": p.Schema(
            p.STRING,
            "The remote group name or ID to be associated with this "
            "security group rule.",
            constraints=[
                constraints.CustomConstraint("neutron.security_group")
            ],
        ),
        "remote_ip_prefix": RULE_SCHEMA["remote_ip_prefix"],
    }
    attributes_schema = {}

    @classmethod
    def validate_properties(cls, values, path, unresolved=()):
        props = super().validate_properties(values, path, unresolved)

        def given(name):  # a value, or a function resolved later
            return props.get(name) is not None or name in unresolved

        if given("remote_group") and given("remote_ip_prefix"):
            raise exception.StackValidationFailed(
                path=path,
                msg="Cannot define the following properties at the same "
                "time: remote_group, remote_ip_prefix.",
            )
        low, high = props.get("port_range_min"), props.get("port_range_max")
        if (
            low is not None
            and high is not None
            and props.get("protocol") not in ICMP
            and high < low
        ):
            raise exception.StackValidationFailed(
                path=path,
                msg="The minimum port number must be less than or equal "
                "to the maximum port number.",
            )
        return props

    def _group_id(self, name_or_id):
        return (
            self._api()
            .find_security_group(name_or_id, ignore_missing=False)
            .id
        )

    def _prepare_create(self, props):
        body = super()._prepare_create(props)
        body.pop("name", None)  # a rule has none
        body["security_group_id"] = self._group_id(props["security_group"])
        if props.get("remote_group"):
            body["remote_group_id"] = self._group_id(props["remote_group"])
        return body
