"""int8/uint8 graph inputs and outputs of a quantized model the engine runs in float.

The GPU holds real values (engine/transforms/quantized.py); the caller feeds and gets
the model's own integer types, as with LiteRT:
- integer_io(graph): {name: (Quantization, dtype)} of the integer graph inputs/outputs;
- to_real(): an int feed -> float32 real values, scale * (q - zero_point) (exactly the
  grid values the float path computes on);
- to_integer(): float results (already on the grid) -> the integer type,
  round(x / scale) + zero_point, clamped.
Pure numpy: no GPU here.
"""

from __future__ import annotations

import numpy as np

from engine.model.ir import Graph, Quantization

INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


def integer_io(graph: Graph) -> dict[str, tuple[Quantization, str]]:
    """Graph inputs and outputs with an int8/uint8 type and one scale, by name."""
    found = {}
    for t in (*graph.inputs, *graph.outputs):
        tensor = graph.tensors[t]
        q = tensor.quantization
        if tensor.dtype in INT_RANGES and q is not None and len(q.scale) == 1:
            found[tensor.name] = (q, tensor.dtype)
    return found


def to_real(name: str, a: np.ndarray, q: Quantization, dtype: str) -> np.ndarray:
    """An integer feed as float32 real values; ValueError for another dtype."""
    a = np.asarray(a)
    if a.dtype != np.dtype(dtype):
        raise ValueError(f"input '{name}': dtype {a.dtype}, expected {dtype} (a quantized input)")
    real = np.float64(np.float32(q.scale[0])) * (a.astype(np.int64) - int(q.zero_point[0]))
    return real.astype(np.float32)


def to_integer(x: np.ndarray, q: Quantization, dtype: str) -> np.ndarray:
    """Real values on the grid of `q` as the integer type (round half away, clamp)."""
    levels = np.asarray(x, np.float64) / np.float64(np.float32(q.scale[0]))
    levels = np.copysign(np.floor(np.abs(levels) + 0.5), levels) + int(q.zero_point[0])
    lo, hi = INT_RANGES[dtype]
    return np.clip(levels, lo, hi).astype(dtype)
