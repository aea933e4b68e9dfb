"""A broken resource plugin stops start-up loudly.

Each test puts a real distribution (a ``.dist-info`` with an
``entry_points.txt``) on ``sys.path``, as ``pip install`` would, so
stevedore finds it the way heat_lite processes find plugins; nothing in
the loader is mocked.
"""

import sys

import pytest
from stevedore import extension

from heat_lite.resources import base, registry


def _install(tmp_path, monkeypatch, entry, module_source=None):
    """A distribution ``fake_plugin`` whose only entry point is ``entry``
    (and, optionally, a module ``fake_plugin_mod`` with that source)."""
    dist = tmp_path / "fake_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[%s]\n%s\n" % (registry.NAMESPACE, entry)
    )
    if module_source is not None:
        (tmp_path / "fake_plugin_mod.py").write_text(module_source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fake_plugin_mod", raising=False)
    # A fresh registry: heat_lite caches the loaded types and stevedore
    # the entry points of a namespace, both per process.
    monkeypatch.setattr(registry, "_TYPES", {})
    monkeypatch.delitem(
        extension.ExtensionManager.ENTRY_POINT_CACHE,
        registry.NAMESPACE,
        raising=False,
    )


def test_a_plugin_that_fails_to_import_stops_loading(tmp_path, monkeypatch):
    _install(
        tmp_path,
        monkeypatch,
        "Broken::Type = fake_plugin_mod:Thing",
        "raise ImportError('needs a library that is not installed')\n",
    )
    with pytest.raises(RuntimeError) as err:
        registry.load()
    message = str(err.value)
    assert "Broken::Type" in message and "fake_plugin_mod:Thing" in message
    assert "needs a library that is not installed" in message


def test_a_misspelt_module_stops_loading(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch, "Typo::Type = fake_plugin_mdo:Thing")
    with pytest.raises(RuntimeError, match="Typo::Type"):
        registry.load()


def test_a_class_that_is_not_a_resource_stops_loading(tmp_path, monkeypatch):
    _install(
        tmp_path,
        monkeypatch,
        "Wrong::Type = fake_plugin_mod:Thing",
        "class Thing:\n    pass\n",
    )
    with pytest.raises(RuntimeError) as err:
        registry.load()
    assert "Wrong::Type is not a Resource subclass" in str(err.value)


def test_a_good_plugin_loads_beside_the_built_in_types(tmp_path, monkeypatch):
    _install(
        tmp_path,
        monkeypatch,
        "Good::Type = fake_plugin_mod:Good",
        "from heat_lite.resources import base\n\n\n"
        "class Good(base.Resource):\n    pass\n",
    )
    types = registry.load()
    assert issubclass(types["Good::Type"], base.Resource)
    for name in (
        "OS::Heat::RandomString",
        "OS::Heat::Value",
        "OS::Heat::WaitConditionHandle",
        "OS::Heat::WaitCondition",
        "OS::Heat::SoftwareConfig",
    ):
        assert name in types
