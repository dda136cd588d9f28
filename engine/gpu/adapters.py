"""Adapter classes: the one reading of wgpu's adapter info that defaults depend on.

Every default that differs between adapters (storage kind, tile tables, work group
limits of CPU adapters) keys on the class, never on a timing, so the same adapter gets
the same kernels, storage and plans on every machine:
- "llvmpipe": Mesa lavapipe (LLVM, 8 lanes with AVX2);
- "swiftshader": Google's CPU Vulkan (Subzero JIT, 4-wide SIMD, no shader-f16);
- "cpu": another software adapter (adapter_type CPU);
- "gpu": anything else.
"""

from __future__ import annotations

CLASSES = ("llvmpipe", "swiftshader", "cpu", "gpu")


def adapter_class(info: dict) -> str:
    """The class of an adapter from wgpu's `adapter.info` dict."""
    text = " ".join(str(info.get(k, "")) for k in ("vendor", "device", "description")).lower()
    if "swiftshader" in text:
        return "swiftshader"
    if "llvmpipe" in text or "lavapipe" in text:
        return "llvmpipe"
    return "cpu" if str(info.get("adapter_type", "")) == "CPU" else "gpu"
