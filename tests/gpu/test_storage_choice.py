"""The storage rule without an adapter: which adapters refuse texture storage and what
resolve_storage gives there (the GL tier, test_gl_backend.py, runs it on a real one)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.errors import DeviceError
from engine.gpu.storage_choice import resolve_storage, texture_refusal

VULKAN = {"device": "llvmpipe (LLVM 15.0.6, 256 bits)", "backend_type": "Vulkan",
          "adapter_type": "CPU"}  # fmt: skip
OPENGL = {**VULKAN, "backend_type": "OpenGL"}


def _ctx(info):
    return SimpleNamespace(info=info, name=f"{info['device']} ({info['backend_type']})")


def test_only_the_opengl_backend_refuses_textures():
    assert texture_refusal(VULKAN) is None
    assert "OpenGL" in texture_refusal(OPENGL) and "wrong results" in texture_refusal(OPENGL)


def test_resolve_storage_on_opengl():
    gl = _ctx(OPENGL)
    assert resolve_storage("auto", gl, "fp32") == "buffer"
    assert resolve_storage("auto", gl, "fp16") == "buffer"  # the llvmpipe rule says texture
    assert resolve_storage("tune", gl, "fp32") == "buffer"  # no probe: one kind is right
    assert resolve_storage("buffer", gl, "fp32") == "buffer"
    with pytest.raises(DeviceError, match=r"storage='texture' on llvmpipe.*\(OpenGL\)"):
        resolve_storage("texture", gl, "fp32")
    assert resolve_storage("texture", _ctx(VULKAN), "fp32") == "texture"
    assert resolve_storage("auto", _ctx(VULKAN), "fp16") == "texture"
