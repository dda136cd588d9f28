"""Which wgpu backends the engine's instance offers (engine/gpu/device.py `_enumerate`):
the primary ones (Vulkan, Metal, D3D12) first, every backend when none matches. Each case
in a fresh process: wgpu-py makes one instance per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers.gpu import gpu_context

gpu_context()  # skip without an adapter

SCRIPT = """
import json, sys
import wgpu
from wgpu.backends.wgpu_native import _helpers
from engine.errors import DeviceError
from engine.gpu.device import GpuContext

case = sys.argv[1]
if case == "caller-first":
    wgpu.gpu.enumerate_adapters_sync()  # the caller makes the instance, with every backend
before = _helpers._the_instance
try:
    ctx = GpuContext.create()
    if case == "then-opengl":  # a second context asks for OpenGL after a first one
        ctx = GpuContext.create(adapter="OpenGL")
except DeviceError as exc:
    print(json.dumps({"error": str(exc)}))
    sys.exit(0)
seen = sorted({a.info["backend_type"] for a in wgpu.gpu.enumerate_adapters_sync()})
kept = before is not None and _helpers._the_instance == before
print(json.dumps({"chosen": ctx.adapter.info["backend_type"], "seen": seen, "kept": kept}))
"""


def run(case: str, adapter: str = "") -> dict:
    env = {**os.environ, "ENGINE_ADAPTER": adapter}
    out = subprocess.run([sys.executable, "-c", SCRIPT, case], env=env, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def every_backend() -> dict:
    """What an instance with every backend offers here (the caller made it)."""
    got = run("caller-first")
    assert "error" not in got, got
    return got


def test_an_instance_made_by_the_caller_is_used_as_it_is(every_backend):
    assert every_backend["kept"]  # not replaced
    assert every_backend["chosen"] != "OpenGL" or every_backend["seen"] == ["OpenGL"]


def test_the_engines_instance_has_the_primary_backends_only(every_backend):
    if "OpenGL" not in every_backend["seen"] or every_backend["seen"] == ["OpenGL"]:
        pytest.skip("needs an OpenGL adapter beside a primary one")
    got = run("engine-first")
    assert got.get("chosen") == every_backend["chosen"], got
    assert "OpenGL" not in got["seen"]


@pytest.mark.parametrize("case", ["engine-first", "then-opengl"])
def test_opengl_when_asked_for(every_backend, case):
    """ENGINE_ADAPTER=OpenGL, or a second context asking for it after a first one."""
    if "OpenGL" not in every_backend["seen"]:
        pytest.skip("no OpenGL adapter here")
    got = run(case, adapter="OpenGL" if case == "engine-first" else "")
    if "cannot create a device" in got.get("error", ""):  # the adapter is there, its driver
        pytest.skip(got["error"])  # makes no device here (headless NVIDIA's EGL)
    assert got.get("chosen") == "OpenGL", got
