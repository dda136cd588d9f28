"""Per-adapter-class tile tables of the conv family, chosen from adapter facts only.

An adapter class is read from wgpu's adapter info (no timing, so the same adapter
always gets the same kernels): "swiftshader" (Google's CPU Vulkan, Subzero JIT: SSE,
4 invocations per SIMD group, a weak register allocator: small blocks win), "llvmpipe"
(Mesa lavapipe: LLVM, 8 lanes with AVX2: larger blocks win), "gpu" (anything else).
The tables hold the measured best per class; the provenance of each is written
next to it (docs/benchmarks.md, "Kernels", has the runs). An ENGINE_TILES override
is deliberately absent: benchmarks compare classes by pointing VK_ICD_FILENAMES at
another driver.
"""

from __future__ import annotations

from dataclasses import dataclass

CLASSES = ("llvmpipe", "swiftshader", "gpu")


def adapter_class(info: dict) -> str:
    """'swiftshader', 'llvmpipe' or 'gpu' from wgpu's adapter info dict."""
    text = " ".join(str(info.get(k, "")) for k in ("vendor", "device", "description")).lower()
    if "swiftshader" in text:
        return "swiftshader"
    if "llvmpipe" in text or "lavapipe" in text:
        return "llvmpipe"
    return "gpu"


@dataclass(frozen=True)
class FirstTile:
    """conv_first: a BY x BX output block x `slices` output slices per invocation."""

    by: int
    bx: int
    slices: int


# Measured (single-op A/B, 5 interleaved rounds, load 3 on 2 CPUs) on the first layers
# of face_detection (128x128x3, 5x5 s2 -> 24) and face_landmark (192x192x3, 3x3 s2 -> 16),
# BY x BX in {1,2,4} x {1,2,4}, all slices per invocation:
#   SwiftShader: 2x2 2.1-4.4 ms / 2.5 ms; 1x1 4.2-7.1 / 2.3; 4x1 8.2 / 2.6 (generic
#   conv: 57.5 ms on face detection); slices 2 per invocation 9.5 ms;
#   lavapipe: 2x2 0.74 / 0.55 ms; 1x4 0.71 / 0.54; 2x1 0.77 / 0.73 (generic 1.44 / 1.00).
# 2x2 is within noise of the best on both; real GPUs: untested, the same.
FIRST_TILE = FirstTile(2, 2, 8)


def first_layer_tile(adapter: str, k: int, stride: int) -> FirstTile:
    """The conv_first tile for a k x k, `stride` layer on `adapter` (one entry so far)."""
    return FIRST_TILE
