"""tools/horizon's pure parts: the settings it writes, the venv key.
(Serving Horizon for real is tests/functional/test_horizon.py.)"""

import ast
import os

from tools.horizon import settings, venv


def _values(text):
    """{name: literal} of the assignments of a settings file."""
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign):
            found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def test_settings_are_python_with_the_given_values():
    text = settings.render(
        keystone_url="http://127.0.0.1:5000/v3",
        secret="s3",
        local_path="/h/local",
        static_root="/v/horizon-static",
        page_size=3,
    )
    values = _values(text)
    assert values["OPENSTACK_KEYSTONE_URL"] == "http://127.0.0.1:5000/v3"
    assert values["SECRET_KEY"] == "s3"
    assert values["STATIC_ROOT"] == "/v/horizon-static"
    assert values["API_RESULT_PAGE_SIZE"] == 3
    assert values["COMPRESS_OFFLINE"] is True and values["DEBUG"] is False
    assert values["ALLOWED_HOSTS"] == ["127.0.0.1", "localhost"]
    # Sessions in a signed cookie, no memcached to run.
    assert values["SESSION_ENGINE"].endswith("signed_cookies")


def test_write_settings_makes_a_local_package(tmp_path):
    venv.write_settings(
        str(tmp_path), "/v", keystone_url="http://k/v3", secret="x"
    )
    local = tmp_path / "local"
    assert (local / "__init__.py").exists()
    values = _values((local / "local_settings.py").read_text())
    assert values["LOCAL_PATH"] == str(local)
    assert values["STATIC_ROOT"] == os.path.join("/v", venv.STATIC)
    assert values["API_RESULT_PAGE_SIZE"] == 20


def test_venv_key_follows_the_pins(tmp_path):
    path = venv.path(str(tmp_path))
    assert os.path.dirname(path) == str(tmp_path)
    assert os.path.basename(path).startswith("horizon-venv-")
    assert venv.path(str(tmp_path)) == path
