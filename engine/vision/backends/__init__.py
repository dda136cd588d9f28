"""The backends the solutions run their models on: one table, one choice, one object each.

- `BACKENDS`: every backend by name, with what it is (the CLI's and engine-extract's
  choices read it); `CHOICES` adds "auto";
- `open_backend(name, ...)`: the chosen backend's object. It makes everything whose
  implementation differs between backends: the models, the detector stage, the crop-model
  stage, the frames, the read-backs and (webgpu only) a solution's GPU-resident frame. A
  solution asks it for those and never tests which backend it has;
- "auto" (the default): "xnnpack" when the adapter is a CPU rasterizer (the classes of
  engine.gpu.adapter_class other than "gpu": lavapipe, SwiftShader, WARP) and LiteRT is
  installed, else "webgpu". Adapter facts only, no timing: the same machine always gets
  the same backend.

Why two: on a CPU rasterizer the engine's WGSL runs 9-18x slower than XNNPACK on the same
cores (llvmpipe reaches 6-20 GFLOP/s on these kernels, XNNPACK 90-150), so a machine
without a GPU runs the models on XNNPACK and keeps the project's pipeline around them.

LiteRT (ai-edge-litert) is the `cpu` extra, not a dependency: it has no wheel for every
platform the engine runs on (Windows' D3D12, for one) and weighs ~60 MB; "auto" without it
stays on webgpu with a warning, "xnnpack" without it is a ModelError naming the extra.

face_landmark_with_attention (FaceMesh refine_landmarks, Holistic refine_face_landmarks)
holds MediaPipe custom ops LiteRT has no kernel for: on xnnpack it runs as LiteRT segments
around them, those ops in numpy (xnnpack.py, litert_segments.py).
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass

from engine.errors import ModelError


@dataclass(frozen=True)
class BackendInfo:
    name: str
    description: str
    module: str  # engine.vision.backends.<module> holds its class
    cls: str


BACKENDS: dict[str, BackendInfo] = {
    b.name: b
    for b in (
        BackendInfo("webgpu", "the engine's WGSL on the WebGPU adapter", "webgpu", "WebGpu"),
        BackendInfo("xnnpack", "LiteRT's XNNPACK on the CPU cores", "xnnpack", "Xnnpack"),
    )
}
CHOICES = ("auto", *BACKENDS)
CPU_ADAPTERS = ("llvmpipe", "swiftshader", "cpu")  # engine.gpu.adapter_class's CPU classes
INSTALL = "pip install webgpu-ar[cpu]"


def litert_installed() -> bool:
    """Whether LiteRT's interpreter imports (the `cpu` extra)."""
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError:
        return False
    return True


def require_litert():
    """LiteRT's Interpreter class, or a ModelError saying how to install it."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as exc:
        raise ModelError(f"backend 'xnnpack' needs LiteRT (ai-edge-litert): `{INSTALL}`") from exc
    return Interpreter


def choose_backend(backend: str, adapter_class: str | None) -> str:
    """The backend's name for a requested `backend` on an adapter of `adapter_class`
    (None: no adapter was asked for, only with backend "xnnpack")."""
    if backend not in CHOICES:
        raise ValueError(f"backend must be one of {CHOICES}, not {backend!r}")
    if backend != "auto":
        return backend
    if adapter_class not in CPU_ADAPTERS:
        return "webgpu"
    if not litert_installed():
        warnings.warn(
            f"the WebGPU adapter is a CPU rasterizer ({adapter_class}), where the models run "
            f"9-18x faster on XNNPACK: `{INSTALL}` (staying on webgpu)",
            stacklevel=4,
        )
        return "webgpu"
    return "xnnpack"


def open_backend(backend: str = "auto", *, context=None, adapter: str | None = None,
                 sync: str = "sleep", num_threads: int | None = None, bgr: bool = False,
                 engine_options: dict | None = None):  # fmt: skip
    """The backend object for `backend` ("auto" decided here, once). An adapter is opened
    unless the backend is "xnnpack" and neither `context` nor `adapter` is given."""
    from engine.gpu import adapter_class, shared_context

    if backend not in CHOICES:
        raise ValueError(f"backend must be one of {CHOICES}, not {backend!r}")
    needs_adapter = backend != "xnnpack" or context is not None or adapter is not None
    ctx = (context or shared_context(adapter)) if needs_adapter else None
    name = choose_backend(backend, adapter_class(ctx.info) if ctx is not None else None)
    info = BACKENDS[name]
    cls = getattr(importlib.import_module(f"{__name__}.{info.module}"), info.cls)
    return cls(ctx, sync=sync, num_threads=num_threads, bgr=bgr,
               engine_options=engine_options or {})  # fmt: skip
