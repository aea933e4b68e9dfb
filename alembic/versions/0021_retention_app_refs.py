"""Image retention: apps created before their references were written
keep the images their template's parameter defaults and environment
name (``image_reference`` rows of kind ``app``; issue 30 item 1)

A data migration: for each live app, the values of its template's
parameter defaults and its environment's ``parameters`` and
``parameter_defaults`` (as ``common.app_spec.named_images`` takes them,
written out here so that this revision does not change with the code)
that name an image heat_lite built and has not retired (by ID, or by
name among the app's project's images) become the app's references.
Images are left in their state: the next retention pass shows a hidden
one again. Downgrading removes nothing (the rows are what the code from
here on writes too).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-04 23:45:00
"""

import json

import sqlalchemy as sa
from alembic import op

# The one place this revision's id is written (renumbered at merge).
REVISION = "0021"
revision = REVISION
down_revision = "0020"
branch_labels = None
depends_on = None

APP = sa.table(
    "app",
    sa.column("id"),
    sa.column("tenant"),
    sa.column("spec"),
    sa.column("deleted_at"),
)
IMAGE = sa.table(
    "managed_image",
    sa.column("id"),
    sa.column("tenant"),
    sa.column("name"),
    sa.column("state"),
)
REFERENCE = sa.table(
    "image_reference",
    sa.column("image_id"),
    sa.column("kind"),
    sa.column("holder"),
    sa.column("tenant"),
    sa.column("created_at"),
)
USABLE = ("NEEDED", "UNNEEDED", "HIDDEN")


def _named(spec):
    """The string values of the parameter defaults and environment."""
    values = []
    template = spec.get("template") or {}
    params = template.get("parameters", template.get("Parameters"))
    if isinstance(params, dict):
        values.extend(
            p.get("default") for p in params.values() if isinstance(p, dict)
        )
    environment = spec.get("environment") or {}
    for key in ("parameters", "parameter_defaults"):
        section = environment.get(key)
        if isinstance(section, dict):
            values.extend(section.values())
    return sorted({v for v in values if isinstance(v, str) and v})


def upgrade():
    conn = op.get_bind()
    apps = conn.execute(
        sa.select(APP.c.id, APP.c.tenant, APP.c.spec).where(
            APP.c.deleted_at.is_(None)
        )
    ).all()
    now = sa.func.now()
    for app_id, tenant, spec in apps:
        values = _named(json.loads(spec))
        if not values:
            continue
        own = sa.and_(IMAGE.c.tenant == tenant, IMAGE.c.name.in_(values))
        ids = (
            conn.execute(
                sa.select(IMAGE.c.id)
                .where(
                    IMAGE.c.state.in_(USABLE),
                    sa.or_(IMAGE.c.id.in_(values), own),
                )
                .order_by(IMAGE.c.id)
            )
            .scalars()
            .all()
        )
        held = set(
            conn.execute(
                sa.select(REFERENCE.c.image_id).where(
                    REFERENCE.c.kind == "app", REFERENCE.c.holder == app_id
                )
            ).scalars()
        )
        for image_id in ids:
            if image_id not in held:
                conn.execute(
                    REFERENCE.insert().values(
                        image_id=image_id,
                        kind="app",
                        holder=app_id,
                        tenant=tenant,
                        created_at=now,
                    )
                )


def downgrade():
    pass
