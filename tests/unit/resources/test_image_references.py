"""Which images a resource's properties name (``Resource.image_references``,
``properties.constrained_values``): what image retention counts as a
record's use of an image."""

from heat_lite.resources import constraints
from heat_lite.resources import properties as p
from heat_lite.resources.openstack import server_schema


def _image(**kw):
    return p.Schema(
        p.STRING,
        constraints=[constraints.CustomConstraint("glance.image")],
        **kw,
    )


SCHEMA = {
    "image": _image(),
    "flavor": p.Schema(
        p.STRING, constraints=[constraints.CustomConstraint("nova.flavor")]
    ),
    "disks": p.Schema(
        p.LIST, schema={"image": _image(), "size": p.Schema(p.INTEGER)}
    ),
    "boot": p.Schema(p.MAP, schema={"source": _image()}),
    "names": p.Schema(p.LIST, schema=_image()),
}


def test_values_under_the_constraint_at_any_depth():
    values = {
        "image": "11111111-2222-3333-4444-555555555555",
        "flavor": "m1.tiny",
        "disks": [{"image": "disk-a", "size": 1}, {"size": 2}],
        "boot": {"source": "boot-image"},
        "names": ["n1", "n2"],
    }
    assert p.constrained_values(SCHEMA, values, "glance.image") == [
        "11111111-2222-3333-4444-555555555555",
        "disk-a",
        "boot-image",
        "n1",
        "n2",
    ]
    assert p.constrained_values(SCHEMA, values, "nova.flavor") == ["m1.tiny"]


def test_absent_null_and_malformed_values_name_nothing():
    assert p.constrained_values(SCHEMA, {}, "glance.image") == []
    assert p.constrained_values(None, None, "glance.image") == []
    assert (
        p.constrained_values(
            SCHEMA,
            {"image": None, "disks": "not a list", "boot": ["x"]},
            "glance.image",
        )
        == []
    )


def test_a_server_names_its_image():
    assert p.constrained_values(
        server_schema.PROPERTIES,
        {"image": "cirros", "flavor": "m1.tiny", "name": "web"},
        "glance.image",
    ) == ["cirros"]


def test_which_schemas_can_name_an_image():
    assert p.has_constraint(SCHEMA, "glance.image")
    assert p.has_constraint({"boot": SCHEMA["boot"]}, "glance.image")
    assert p.has_constraint({"names": SCHEMA["names"]}, "glance.image")
    assert not p.has_constraint({"flavor": SCHEMA["flavor"]}, "glance.image")
    assert p.has_constraint(server_schema.PROPERTIES, "glance.image")
