"""Storage precisions: one object per precision carries every fact derived from its name.

    from engine.precision import precision
    p = precision("fp16")
    p.dtype, p.wgsl, p.element_bytes, p.texture_format, p.tolerance

Engine(precision=...), the CLI's --precision, kernels (BuildContext.precision_info), the
storage and I/O code and the tests read these, never the name alone. Arithmetic inside
conv-like kernels accumulates in f32 at both precisions (shaders/engine/weights.wgsl);
the tolerances are what the kernel tests allow against the float64/reference oracle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Precision:
    name: str  # "fp32" | "fp16": the option value
    dtype: type[np.floating]  # element type of tensors as stored on the GPU
    wgsl: str  # the WGSL scalar type of stored values (T in shaders/engine/common.wgsl)
    texture_format: str  # rgba texture format of texture-stored tensors
    max_value: float  # largest finite value (literal constants beyond it go to buffers)
    # A kernel's output may differ from the float64/reference oracle by this much, times
    # max(1, max|oracle|) (tests/helpers/gpu.py): f32 rounding; fp16 storage with f32 math.
    tolerance: float
    device_feature: str | None  # WebGPU feature the device needs, if any
    # vec4<T> arrays may sit in the uniform address space only with a 16-byte stride:
    # vec4<f16> has 8, so fp16 constants go to storage buffers.
    uniform_vec4_arrays: bool

    @property
    def element_bytes(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def vec4_bytes(self) -> int:
        return 4 * self.element_bytes

    @property
    def lowest_wgsl(self) -> str:
        """The most negative finite value as a WGSL literal (a max-pool's start)."""
        return "-3.40282347e+38" if self.wgsl == "f32" else f"-{self.max_value:.1f}"


FP32 = Precision("fp32", np.float32, "f32", "rgba32float", float(np.finfo(np.float32).max),
                 tolerance=1e-5, device_feature=None, uniform_vec4_arrays=True)  # fmt: skip
FP16 = Precision("fp16", np.float16, "f16", "rgba16float", 65504.0,
                 tolerance=2e-3, device_feature="shader-f16", uniform_vec4_arrays=False)  # fmt: skip

PRECISIONS: dict[str, Precision] = {p.name: p for p in (FP32, FP16)}


def precision(name: str) -> Precision:
    """The Precision called `name`; ValueError naming the known ones otherwise."""
    if name not in PRECISIONS:
        raise ValueError(f"precision must be one of {tuple(PRECISIONS)}, not {name!r}")
    return PRECISIONS[name]


def max_common_value() -> float:
    """The largest value every precision represents (a literal valid at any precision)."""
    return min(p.max_value for p in PRECISIONS.values())
