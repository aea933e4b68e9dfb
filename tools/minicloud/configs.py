"""The test cloud's configuration files, written from a ``Layout``.

Each service gets a config directory under ``<dir>/etc/<service>``; the
launcher points the service at it with ``OS_<SERVICE>_CONFIG_DIR``. The
choices that make a cloud work on one small machine without agents are
explained beside them (see also shared/reference/minicloud.md).
"""

import os
import shutil

_AUTHTOKEN = """
[keystone_authtoken]
www_authenticate_uri = {auth_url}
auth_url = {auth_url}
auth_type = password
username = {user}
password = {password}
project_name = service
user_domain_name = Default
project_domain_name = Default
"""

# Keystone: fernet tokens; an in-process token cache (one gunicorn worker,
# so it is coherent) turns ~200 ms validations into ~1 ms; cheap password
# hashing keeps user creation fast.
_KEYSTONE = """
[DEFAULT]
log_file = {log}/keystone.log
[database]
connection = {db_keystone}
[token]
provider = fernet
[fernet_tokens]
key_repository = {dir}/keystone/fernet-keys
[fernet_receipts]
key_repository = {dir}/keystone/fernet-keys
[credential]
key_repository = {dir}/keystone/credential-keys
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = dogpile.cache.memory
"""

_GLANCE = (
    """
[DEFAULT]
log_file = {log}/glance-api.log
enabled_backends = fs:file
[database]
connection = {db_glance}
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = {dir}/glance/images
[os_glance_staging_store]
filesystem_store_datadir = {dir}/glance/staging
[os_glance_tasks_store]
filesystem_store_datadir = {dir}/glance/tasks
[paste_deploy]
flavor = keystone
config_file = {dir}/etc/glance/glance-api-paste.ini
[oslo_concurrency]
lock_path = {dir}/glance/lock
# web-download (OS::Glance::WebImage) from a test's own HTTP server on
# loopback, on any port: Glance refuses loopback and ports other than
# 80/443 unless told.
[import_filtering_opts]
allowed_hosts = [127.0.0.1]
allowed_ports = []
"""
    + _AUTHTOKEN
)

_PLACEMENT = (
    """
[DEFAULT]
log_file = {log}/placement-api.log
[placement_database]
connection = {db_placement}
[api]
auth_strategy = keystone
"""
    + _AUTHTOKEN
)

# Neutron: API only (no RPC workers, no agents); the project's own
# mechanism driver binds every port and its trunk driver lets the trunk
# service plugin load (OS::Neutron::Trunk).
_NEUTRON = (
    """
[DEFAULT]
log_file = {log}/neutron-api.log
core_plugin = ml2
service_plugins = router,trunk
rpc_workers = 0
rpc_state_report_workers = 0
auth_strategy = keystone
api_paste_config = {dir}/etc/neutron/api-paste.ini
state_path = {dir}/neutron
transport_url = {transport_url}
notify_nova_on_port_status_changes = true
notify_nova_on_port_data_changes = true
[database]
connection = {db_neutron}
[oslo_concurrency]
lock_path = {dir}/neutron/lock
[oslo_messaging_notifications]
driver = noop
[nova]
auth_url = {auth_url}
auth_type = password
username = nova
password = {password}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = {region}
"""
    + _AUTHTOKEN
)

_ML2 = """
[ml2]
type_drivers = flat,vxlan,local
tenant_network_types = vxlan
mechanism_drivers = heat_lite_bind_all
extension_drivers = port_security
[ml2_type_flat]
flat_networks = public
[ml2_type_vxlan]
vni_ranges = 1:1000
[securitygroup]
firewall_driver = noop
"""

_SERVICE_AUTH = """
auth_url = {auth_url}
auth_type = password
username = {service_user}
password = {password}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = {region}
"""

# Nova: the fake virt driver on one host (ours: its snapshots upload an
# image, see nova_driver/minicloud_nova.py); resize to the same host; one
# conductor and one scheduler worker; no consoles, no notifications.
_NOVA = (
    """
[DEFAULT]
log_dir = {log}
transport_url = {transport_url}
compute_driver = minicloud_nova.FakeDriver
host = mc-compute1
my_ip = 127.0.0.1
allow_resize_to_same_host = true
state_path = {dir}/nova
[api]
auth_strategy = keystone
[api_database]
connection = {db_nova_api}
[database]
connection = {db_nova}
[wsgi]
api_paste_config = {dir}/etc/nova/api-paste.ini
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 10
[oslo_concurrency]
lock_path = {dir}/nova/lock
[oslo_messaging_notifications]
driver = noop
[vnc]
enabled = false
[spice]
enabled = false
[serial_console]
enabled = false
[placement]
{service_auth}
[neutron]
{service_auth}
[service_user]
send_service_user_token = true
{service_auth}
"""
    + _AUTHTOKEN
)

# oslo.log names the file after the binary, which for nova-api is
# gunicorn: this extra file (read after nova.conf) names it.
_NOVA_API = """
[DEFAULT]
log_dir =
log_file = {log}/nova-api.log
"""

_PASTE = {
    "glance": "glance-api-paste.ini",
    "neutron": "api-paste.ini",
    "nova": "api-paste.ini",
}


def _values(layout):
    values = {
        "dir": layout.dir,
        "log": layout.path("log"),
        "auth_url": layout.auth_url,
        "password": layout.password,
        "transport_url": layout.transport_url,
        "region": "RegionOne",
    }
    for name in (
        "keystone",
        "glance",
        "placement",
        "neutron",
        "nova_api",
        "nova",
    ):
        values["db_%s" % name] = layout.db_url(name)
    # Nova reaches placement and neutron as itself.
    values["service_auth"] = _SERVICE_AUTH.format(
        service_user="nova", **values
    ).strip()
    return values


def _write(layout, relpath, template, values, **extra):
    path = layout.path("etc", relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(template.format(**dict(values, **extra)).lstrip())


def render(layout):
    """Write every config file and make the data directories."""
    values = _values(layout)
    for sub in (
        "log",
        "keystone/fernet-keys",
        "keystone/credential-keys",
        "glance/images",
        "glance/staging",
        "glance/tasks",
        "glance/lock",
        "neutron/lock",
        "nova/lock",
    ):
        os.makedirs(layout.path(sub), exist_ok=True)
    _write(layout, "keystone/keystone.conf", _KEYSTONE, values)
    _write(layout, "glance/glance-api.conf", _GLANCE, values, user="glance")
    _write(
        layout,
        "placement/placement.conf",
        _PLACEMENT,
        values,
        user="placement",
    )
    _write(layout, "neutron/neutron.conf", _NEUTRON, values, user="neutron")
    _write(layout, "neutron/plugins/ml2/ml2_conf.ini", _ML2, values)
    _write(layout, "nova/nova.conf", _NOVA, values, user="nova")
    _write(layout, "nova/nova-api.conf", _NOVA_API, values)
    for service, name in _PASTE.items():
        shutil.copy(
            os.path.join(layout.venv, "etc", service, name),
            layout.path("etc", service, name),
        )
