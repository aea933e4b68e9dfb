"""The user data an OS::Nova::Server boots with, per ``user_data_format``.

``RAW``: the text as given. ``SOFTWARE_CONFIG``: packed for cloud-init as
Heat packs it, a MIME multipart message of

* a cloud-config part that sends all of cloud-init's output to
  ``/var/log/cloud-init-output.log``;
* a cloud-init part handler that writes the ``text/x-cfninitdata`` parts
  into ``/var/lib/heat-cfntools/`` (where os-collect-config and
  heat-cfntools look for them);
* the user data itself: each of its parts when it is a multipart message
  (an ``OS::Heat::MultipartMime``), else one part that cloud-init types
  by its first line (``#cloud-config``, ``#!``);
* ``cfn-init-data`` (``text/x-cfninitdata``): the metadata the in-guest
  agents read, ``{"deployments": []}`` (a deployment needs the server's
  ID, so there is none at boot: deployments reach the agent later, in
  the server resource's metadata).

With both formats a software config's ID (``OS::Heat::SoftwareConfig``,
``CloudConfig``, ``MultipartMime``) stands for its config, as in Heat.
``HEAT_CFNTOOLS`` user data is passed as it is: the heat-cfntools
packaging (cfn credentials, boto config) needs a CloudFormation API.
"""

import email
import json
from email.mime import multipart

from heat_lite.resources import cloud_config

LOG_OUTPUT = (
    "#cloud-config\noutput: {all: '| tee -a /var/log/cloud-init-output.log'}\n"
)
# Our own handler, run by cloud-init for the content types it lists.
PART_HANDLER = '''#part-handler
"""Write text/x-cfninitdata parts to /var/lib/heat-cfntools/<filename>."""
import os

DIRECTORY = "/var/lib/heat-cfntools"


def list_types():
    return ["text/x-cfninitdata"]


def handle_part(data, ctype, filename, payload):
    if ctype != "text/x-cfninitdata":
        return  # cloud-init's __begin__ and __end__ calls
    os.makedirs(DIRECTORY, exist_ok=True)
    with open(os.path.join(DIRECTORY, filename), "w") as f:
        f.write(payload)
'''


def text(props, tenant, configs):
    """The user data text of a server's properties ('' for none;
    ``configs``: the plugin's ``services.software_configs``)."""
    value = props.get("user_data") or ""
    fmt = props.get("user_data_format")
    if not value and fmt != "SOFTWARE_CONFIG":
        return ""
    if fmt in ("RAW", "SOFTWARE_CONFIG"):
        value = cloud_config.stored_config(configs, value, tenant)
    if fmt == "SOFTWARE_CONFIG":
        return software_config_message(value)
    return value


def _user_parts(user_data):
    if not user_data:
        return []
    message = email.message_from_string(user_data)
    if message.is_multipart():
        return [
            cloud_config.mime_part(
                part.get_payload(),
                part.get_content_subtype(),
                part.get_filename(),
            )
            for part in message.get_payload()
        ]
    return [cloud_config.mime_part(user_data, None, None)]


def software_config_message(user_data):
    """The SOFTWARE_CONFIG multipart message around ``user_data``."""
    parts = [
        cloud_config.mime_part(LOG_OUTPUT, "cloud-config", "cloud-config"),
        cloud_config.mime_part(
            PART_HANDLER, "part-handler", "part-handler.py"
        ),
        *_user_parts(user_data),
        cloud_config.mime_part(
            json.dumps({"deployments": []}), "x-cfninitdata", "cfn-init-data"
        ),
    ]
    return multipart.MIMEMultipart(_subparts=parts).as_string()
