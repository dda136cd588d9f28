"""The wheel: exactly the engine and app packages, with every WGSL template they use."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile

import pytest

from tests.helpers.files import ROOT

TEMPLATE = re.compile(r"""["']((?:app/|vision/)?[a-z0-9_]+\.wgsl)["']""")
INCLUDE = re.compile(r"""{%-?\s*(?:include|import|from)\s+["']([^"']+\.wgsl)["']""")


def referenced_templates() -> set[str]:
    """Template names the Python code renders and the templates include."""
    names: set[str] = set()
    for package in ("engine", "app"):
        for path in (ROOT / package).rglob("*.py"):
            names |= set(TEMPLATE.findall(path.read_text()))
    for path in (ROOT / "shaders").rglob("*.wgsl"):
        names |= set(INCLUDE.findall(path.read_text()))
    return names


def in_wheel(name: str) -> str:
    """Where template `name` lives in the wheel ("app/x.wgsl" is the app's namespace,
    "vision/x.wgsl" engine.vision's)."""
    if name.startswith("app/"):
        return f"app/shaders/{name.removeprefix('app/')}"
    if name.startswith("vision/"):
        return f"engine/vision/shaders/{name.removeprefix('vision/')}"
    return f"engine/shaders/{name}"


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory) -> list[str]:
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
           "--quiet", "-w", str(out), str(ROOT)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def test_wheel_installs_only_engine_and_app(wheel_files):
    tops = {n.split("/")[0] for n in wheel_files if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"engine", "app"}
    assert "engine/catalog/manifest.json" in wheel_files
    face = "engine/vision/data/face_geometry/"  # the vendored data and its licence
    for name in ("geometry_pipeline_metadata_landmarks.pbtxt", "LICENSE"):
        assert face + name in wheel_files
    effect = "app/assets/face_effect/"  # ar-demo's default glasses and their licence
    for name in ("glasses.pbtxt", "glasses.png", "LICENSE", "README.md"):
        assert effect + name in wheel_files


def test_wheel_holds_every_template_the_code_uses(wheel_files):
    names = referenced_templates()
    assert {"conv2d.wgsl", "tensor.wgsl", "app/draw.wgsl"} <= names  # the scan finds them
    missing = sorted(n for n in names if in_wheel(n) not in wheel_files)
    assert not missing, f"templates missing from the wheel: {missing}"
    shipped = {n for n in wheel_files if n.endswith(".wgsl")}
    in_repo = {f"engine/shaders/{p.name}" for p in (ROOT / "shaders" / "engine").glob("*.wgsl")}
    in_repo |= {f"app/shaders/{p.name}" for p in (ROOT / "shaders" / "app").glob("*.wgsl")}
    in_repo |= {f"engine/vision/shaders/{p.name}"
                for p in (ROOT / "shaders" / "vision").glob("*.wgsl")}  # fmt: skip
    assert shipped == in_repo
