"""Apps over RPC (one engine process, SQLite file, fake:// transport):
create, list, show, update, delete, each in the caller's project only;
the secret encrypted at rest and never answered."""

import copy
import threading
import uuid

import pytest

from harness import polling
from heat_lite import conf
from heat_lite.common import context, crypt, exception
from heat_lite.db import apps as db_apps
from heat_lite.db import image_needs, managed_images
from heat_lite.db import stacks as db_stacks
from heat_lite.engine import rpcapi
from heat_lite.engine.endpoint import service

CONF = conf.CONF
SECRET = "a webhook secret of the app"
VERIFY = {"checks": [{"type": "signal"}]}
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"image": {"type": "string", "default": "none"}},
}


pytestmark = pytest.mark.usefixtures("apps_conf")


def _ctxt():
    return context.RequestContext(
        project_id="p" + uuid.uuid4().hex[:8], user_id="dev", overwrite=False
    )


def _body(name="shop", **extra):
    body = {
        "name": name,
        "source": {"url": "file:///srv/git/shop", "branches": ["main"]},
        "builder": {"name": "artifact"},
        "template": copy.deepcopy(TEMPLATE),
        "image_parameter": "image",
    }
    body.update(extra)
    return body


@pytest.fixture
def api():
    return rpcapi.EngineAPI(timeout=30)


def test_create_show_list_update_delete(api):
    ctxt = _ctxt()
    app = api.create_app(ctxt, _body(webhook_secret=SECRET))
    assert app["name"] == "shop" and app["webhook"] is True
    assert app["project"] == ctxt.project_id and app["version"] == 1
    assert app["template"] == TEMPLATE
    assert SECRET not in repr(app)
    stored = db_apps.app_get(ctxt.project_id, app["id"])["webhook_secret"]
    assert SECRET not in stored and crypt.decrypt(stored) == SECRET

    assert api.show_app(ctxt, "shop")["id"] == app["id"]
    assert api.show_app(ctxt, app["id"])["name"] == "shop"
    listed = api.list_apps(ctxt)
    assert [a["id"] for a in listed] == [app["id"]]
    assert "template" not in listed[0] and listed[0]["webhook"] is True

    changed = api.update_app(
        ctxt, "shop", {"source": {"url": "file:///srv/git/shop",
                                  "branches": ["main", "rel/*"]}}
    )  # fmt: skip
    assert changed["source"]["branches"] == ["main", "rel/*"]
    assert changed["version"] == 2 and changed["webhook"] is True
    assert (
        api.update_app(ctxt, "shop", {"webhook_secret": None})["webhook"]
        is False
    )

    api.delete_app(ctxt, "shop")
    with pytest.raises(exception.AppNotFound):
        api.show_app(ctxt, app["id"])
    assert api.list_apps(ctxt) == []
    assert api.create_app(ctxt, _body())["id"] != app["id"]


def test_another_project_sees_and_touches_nothing(api):
    owner, other = _ctxt(), _ctxt()
    app = api.create_app(owner, _body())
    for call in (
        lambda: api.show_app(other, app["id"]),
        lambda: api.show_app(other, "shop"),
        lambda: api.update_app(other, app["id"], {"verify": None}),
        lambda: api.delete_app(other, app["id"]),
    ):
        with pytest.raises(exception.AppNotFound):
            call()
    assert api.list_apps(other) == []
    assert api.create_app(other, _body())["id"] != app["id"]
    assert api.show_app(owner, "shop")["version"] == 1


def test_refusals_travel_back_typed(api):
    ctxt = _ctxt()
    api.create_app(ctxt, _body())
    with pytest.raises(exception.AppExists):
        api.create_app(ctxt, _body())
    for bad in (
        _body(name="1x"),
        _body(name="x", image_parameter="flavor"),
        _body(name="x", stacks={"main": "nonesuch"}),
    ):
        with pytest.raises(exception.InvalidApp):
            api.create_app(ctxt, bad)
    with pytest.raises(exception.InvalidApp):
        api.update_app(ctxt, "shop", {"name": "other"})
    with pytest.raises(exception.InvalidApp):
        api.update_app(ctxt, "shop", {"template": {"heat_template_version":
                                                   "2021-04-16"}})  # fmt: skip
    with pytest.raises(exception.Invalid):
        api.list_apps(ctxt, sort_key="secret")
    with pytest.raises(exception.Invalid):
        api.list_apps(ctxt, limit=-1)
    assert [a["version"] for a in api.list_apps(ctxt)] == [1]


def test_an_existing_stack_is_adopted_by_name(api, engine):
    ctxt = _ctxt()
    ident = service.EngineService(engine.ops, engine.services).create_stack(
        ctxt, "shop-prod", copy.deepcopy(TEMPLATE), {}, {}, None, None, {}
    )
    app = api.create_app(ctxt, _body(stacks={"main": "shop-prod"}))
    assert app["stacks"] == {"main": "shop-prod"}
    with pytest.raises(exception.InvalidApp):
        api.create_app(_ctxt(), _body(stacks={"main": "shop-prod"}))
    with pytest.raises(exception.InvalidApp):
        api.update_app(ctxt, "shop", {"stacks": {"main": "nonesuch"}})
    # An adopted stack gone since does not block other changes.
    service.EngineService(engine.ops, engine.services).delete_stack(
        ctxt, {"stack_id": ident["stack_id"]}
    )
    polling.until(
        lambda: not db_stacks.stack_get_all(ctxt.project_id),
        what="shop-prod deleted",
    )
    changed = api.update_app(ctxt, "shop", {"verify": VERIFY})
    assert changed["stacks"] == {"main": "shop-prod"}
    assert changed["verify"]["checks"] == VERIFY["checks"]


def test_of_concurrent_updates_none_is_lost(api):
    """Each update is conditional on the version it read: racing ones
    either land (one after the other) or get a 409, never overwrite."""
    ctxt = _ctxt()
    api.create_app(ctxt, _body())
    outcomes = []

    def update(branch):
        try:
            api.update_app(
                ctxt,
                "shop",
                {"source": {"url": "file:///srv/git/shop",
                            "branches": [branch]}},
            )  # fmt: skip
            outcomes.append(branch)
        except exception.AppChanged:
            outcomes.append(None)

    threads = [
        threading.Thread(target=update, args=("b%d" % i,)) for i in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    landed = [b for b in outcomes if b]
    app = api.show_app(ctxt, "shop")
    assert len(outcomes) == 4 and landed
    assert app["version"] == 1 + len(landed)
    assert app["source"]["branches"][0] in landed


def test_an_app_keeps_the_images_its_defaults_and_environment_name(api):
    """Image retention's ``app`` references, written by the app's
    create, replaced by its update, released by its delete."""
    ctxt = _ctxt()
    named, later = (str(uuid.uuid4()) for _ in "12")
    for image_id in (named, later):
        managed_images.image_add(
            {"id": image_id, "tenant": ctxt.project_id, "name": "img"}
        )

    def kept_by(image_id):
        why = image_needs.needed([image_id], lambda app: 0)[image_id]
        return [(r["kind"], r["holder"]) for r in why]

    template = copy.deepcopy(TEMPLATE)
    template["parameters"]["image"]["default"] = named
    app = api.create_app(ctxt, _body(name="kept", template=template))
    assert kept_by(named) == [("app", app["id"])]
    api.update_app(
        ctxt, "kept", {"environment": {"parameter_defaults": {"image": later}}}
    )
    # The default is still named; so is the environment's value now.
    assert kept_by(named) == [("app", app["id"])]
    assert kept_by(later) == [("app", app["id"])]
    api.update_app(ctxt, "kept", {"template": copy.deepcopy(TEMPLATE)})
    assert kept_by(named) == []
    api.delete_app(ctxt, "kept")
    assert kept_by(later) == []
