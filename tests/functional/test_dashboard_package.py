"""``pip install .`` brings the dashboard complete: the wheel built from
this tree holds every file the page loads."""

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from heat_lite.api.dashboard import static

pytestmark = pytest.mark.functional
ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    "venv",
    ".tox",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "bench",
    "tests",
    "doc",
)


def test_wheel_ships_every_dashboard_file(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=_SKIP)
    out = tmp_path / "wheel"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.iterdir()
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    shipped = {
        n.rsplit("/", 1)[1]
        for n in names
        if n.startswith("heat_lite/api/dashboard/static/")
    }
    assert shipped == set(static.Files().names())
    assert "heat_lite/api/dashboard/__init__.py" in names
