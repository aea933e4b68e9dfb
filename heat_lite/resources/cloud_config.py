"""OS::Heat::CloudConfig and OS::Heat::MultipartMime: user data for servers.

Both are software configs (stored like ``OS::Heat::SoftwareConfig``, in
the table ``/software_configs`` serves) whose ``config`` is built from
their properties: ``#cloud-config`` followed by the YAML of
``cloud_config``; or a MIME multipart message of ``parts``, each inline
text or the ID of another software config (whose own parts are taken
apart when the part's ``type`` is ``multipart``). A server's
``user_data`` naming such a config's ID boots with its text.
"""

import email
import uuid
from email.mime import multipart, text

import yaml

from heat_lite.common import exception
from heat_lite.resources import constraints as c
from heat_lite.resources import properties as p
from heat_lite.resources import software_config


def _store_config(plugin, config):
    config_id = str(uuid.uuid4())
    plugin.store.software_config_create(
        {
            "id": config_id,
            "tenant": plugin._tenant(),
            "name": plugin.physical_resource_name(),
            "group": plugin.properties.get("group") or "Heat::Ungrouped",
            "config": config,
            "options": {},
            "inputs": [],
            "outputs": [],
        }
    )
    plugin.resource_id_set(config_id)


def stored_config(store, value, tenant):
    """The text of the software config whose ID is ``value``; ``value``
    itself when it is not the ID of one (inline content)."""
    try:
        uuid.UUID(value)
    except (TypeError, ValueError):
        return value
    try:
        return store.software_config_get(value, tenant).get("config") or ""
    except exception.NotFound:
        return value


class CloudConfig(software_config.SoftwareConfig):
    """cloud-init's cloud-config as a software config."""

    properties_schema = {
        "cloud_config": p.Schema(
            p.MAP,
            "Map representing the cloud-config "
            "data structure which will be formatted "
            "as YAML.",
        ),
    }

    def handle_create(self):
        body = yaml.safe_dump(
            self.properties.get("cloud_config") or {}, default_flow_style=False
        )
        _store_config(self, "#cloud-config\n" + body)


class MultipartMime(software_config.SoftwareConfig):
    """A MIME multipart message of configs, for cloud-init."""

    properties_schema = {
        "group": p.Schema(
            p.STRING,
            "Namespace to group this multi-part "
            "configs by when delivered to a server.",
            default="Heat::Ungrouped",
        ),
        "parts": p.Schema(
            p.LIST,
            "Parts belonging to this message.",
            default=[],
            schema=p.Schema(
                p.MAP,
                schema={
                    "config": p.Schema(
                        p.STRING,
                        "Content of part to attach, "
                        "either inline or by referencing the ID of "
                        "another software config resource.",
                        required=True,
                    ),
                    "filename": p.Schema(
                        p.STRING, "Optional filename to associate with part."
                    ),
                    "type": p.Schema(
                        p.STRING,
                        "Whether the part content is text or multipart.",
                        default="text",
                        constraints=[c.AllowedValues(["text", "multipart"])],
                    ),
                    "subtype": p.Schema(
                        p.STRING, "Optional subtype to specify with the type."
                    ),
                },
            ),
        ),
    }

    def handle_create(self):
        _store_config(self, self.message())

    def message(self):
        parts = []
        for item in self.properties.get("parts") or []:
            content = stored_config(self.store, item["config"], self._tenant())
            if item.get("type") == "multipart":
                inner = email.message_from_string(content)
                if inner.is_multipart():
                    for sub in inner.get_payload():
                        parts.append(
                            mime_part(
                                sub.get_payload(),
                                sub.get_content_subtype(),
                                sub.get_filename(),
                            )
                        )
            else:
                parts.append(
                    mime_part(
                        content, item.get("subtype"), item.get("filename")
                    )
                )
        return multipart.MIMEMultipart(_subparts=parts).as_string()


def mime_part(content, subtype, filename):
    """One text/<subtype> part (text/plain without one), an attachment
    named ``filename`` when there is one."""
    charset = "us-ascii" if content.isascii() else "utf-8"
    part = text.MIMEText(
        content, _subtype=subtype or "plain", _charset=charset
    )
    if filename:
        part.add_header("Content-Disposition", "attachment", filename=filename)
    return part
