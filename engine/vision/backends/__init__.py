"""Which inference backend the solutions run their models on, decided from adapter facts.

- "webgpu": the engine's WGSL on the WebGPU adapter (engine.gpu.Engine);
- "xnnpack": LiteRT's XNNPACK on the CPU cores (engine/vision/xnnpack.py), the solutions'
  pre- and post-processing in numpy/OpenCV around it;
- "auto" (the default): "xnnpack" when the adapter is a CPU rasterizer (the classes of
  engine.gpu.adapter_class other than "gpu": lavapipe, SwiftShader, WARP and other CPU
  adapters) and LiteRT is installed, else "webgpu". Adapter facts only, no timing: the same
  machine always gets the same backend.

Why: on a CPU rasterizer the engine's WGSL runs 9-18x slower than XNNPACK on the same cores
(issue 31; llvmpipe reaches 6-20 GFLOP/s on these kernels, XNNPACK 90-150), so a machine
without a GPU runs the models on XNNPACK and keeps the project's pipeline around them.

LiteRT (ai-edge-litert) is the `cpu` extra, not a dependency: it has no wheel for every
platform the engine runs on (Windows' D3D12, for one) and weighs ~60 MB; "auto" without it
stays on webgpu with a warning, "xnnpack" without it is a ModelError naming the extra.

face_landmark_with_attention (FaceMesh refine_landmarks, Holistic refine_face_landmarks)
holds MediaPipe custom ops LiteRT has no kernel for: a solution that needs it runs wholly
on webgpu ("auto" picks it whatever the adapter), and "xnnpack" is a ModelError naming the
option (`webgpu_only`).
"""

from __future__ import annotations

import warnings

from engine.errors import ModelError
from engine.reference.landmark_ops import NO_LITERT_KERNEL

BACKENDS = ("auto", "webgpu", "xnnpack")
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
    """ "webgpu" or "xnnpack" for a requested `backend` on an adapter of `adapter_class`
    (None: no adapter was asked for, only with backend "xnnpack")."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    if backend != "auto":
        return backend
    if adapter_class not in CPU_ADAPTERS:
        return "webgpu"
    if not litert_installed():
        warnings.warn(
            f"the WebGPU adapter is a CPU rasterizer ({adapter_class}), where the models run "
            f"9-18x faster on XNNPACK: `{INSTALL}` (staying on webgpu)",
            stacklevel=3,
        )
        return "webgpu"
    return "xnnpack"


def webgpu_only(backend: str, option: str) -> str:
    """The requested `backend` of a solution whose `option` needs face_landmark_with_attention
    ("auto" becomes "webgpu"); ModelError for "xnnpack", which cannot run that model."""
    if backend == "xnnpack":
        raise ModelError(
            f"{option}=True runs face_landmark_with_attention, whose MediaPipe custom ops "
            f"({', '.join(sorted(NO_LITERT_KERNEL))}) LiteRT has no kernel for, so backend "
            f"'xnnpack' cannot run it: use backend='webgpu' (or 'auto', which picks webgpu "
            f"for {option})"
        )
    return "webgpu" if backend == "auto" else backend
