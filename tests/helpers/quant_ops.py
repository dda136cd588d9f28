"""Single-op quantized test models: int8/uint8 activations, int8 weights, int32 biases.

Usage:
    x = activation("x", (1, 8, 8, 3), 0.05, -3)
    w = weights("w", rng, (4, 3, 3, 3), axis=0)       # per-channel int8
    g = quant_graph("CONV_2D", [x, w, bias_for(x, w, rng)], out=(0.1, 5), attrs=...)
    feeds = int_feeds(g, rng)
    assert_same(run_litert(g, feeds), Interpreter(g).run(feeds))
"""

from __future__ import annotations

import numpy as np

from engine.model.builder import GraphBuilder
from engine.model.ir import Graph, Op, Quantization, Tensor
from engine.reference import registry

RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


def activation(name: str, shape, scale: float, zero: int, dtype: str = "int8") -> Tensor:
    """A non-constant quantized tensor (per-tensor grid)."""
    return Tensor(name, tuple(shape), dtype, None, Quantization((scale,), (zero,)))


def weights(name: str, rng, shape, axis: int | None = 0, scale: float = 0.02) -> Tensor:
    """Constant symmetric int8 weights; per channel along `axis` (None: per tensor)."""
    data = rng.integers(-127, 128, shape).astype(np.int8)
    if axis is None:
        return Tensor(name, tuple(shape), "int8", data, Quantization((scale,), (0,)))
    n = shape[axis]
    scales = tuple(float(np.float32(v)) for v in rng.uniform(0.5, 1.5, n) * scale)
    return Tensor(name, tuple(shape), "int8", data, Quantization(scales, (0,) * n, axis))


def bias_for(x: Tensor, w: Tensor, rng, channels: int, spread: int = 2000) -> Tensor:
    """int32 bias on the input scale * weight scale grid (per channel), zero point 0."""
    ws = np.broadcast_to(np.asarray(w.quantization.scale, np.float64), (channels,))
    scales = tuple(float(np.float32(x.quantization.scale[0] * s)) for s in ws)
    data = rng.integers(-spread, spread, channels).astype(np.int32)
    return Tensor("bias", (channels,), "int32", data, Quantization(scales, (0,) * channels))


def const(name: str, data: np.ndarray) -> Tensor:
    """A plain constant (shapes, axes, paddings)."""
    data = np.asarray(data)
    return Tensor(name, tuple(data.shape), data.dtype.name, data)


def quant_graph(
    op_type: str,
    inputs: list[Tensor | None],
    out: tuple[float, int] | None,
    attrs: dict | None = None,
    out_dtype: str = "int8",
    out_shape: tuple[int, ...] | None = None,
) -> Graph:
    """One op over `inputs` (non-constant ones become graph inputs); the output is on
    grid `out` (scale, zero point), or float32 when `out` is None."""
    b = GraphBuilder()
    ids = [-1 if t is None else b.add_tensor(t) for t in inputs]
    graph_inputs = [
        i for i, t in zip(ids, inputs, strict=True) if t is not None and not t.is_constant
    ]
    shape = out_shape or _probe_shape(op_type, inputs, attrs or {})
    if out is None:
        y = b.tensor(shape, name="output")
    else:
        grid = Quantization((out[0],), (out[1],))
        y = b.tensor(shape, name="output", dtype=out_dtype, quantization=grid)
    b.add_op(Op(op_type, tuple(ids), (y,), dict(attrs or {})))
    return b.graph(graph_inputs, [y], name=f"quant:{op_type}")


def _probe_shape(op_type: str, inputs: list[Tensor | None], attrs: dict) -> tuple[int, ...]:
    """The output shape: the op table's rule, else the float kernel on zeros (output_types)."""
    probe = Op(op_type, tuple(range(len(inputs))), (len(inputs),), attrs)
    return registry.output_types(probe, inputs)[0][0]


def int_feeds(graph: Graph, rng) -> dict[str, np.ndarray]:
    """Uniform integers over the whole range for integer inputs, [-2, 2) for float ones."""
    feeds = {}
    for t in graph.inputs:
        tensor = graph.tensors[t]
        if tensor.dtype in RANGES:
            lo, hi = RANGES[tensor.dtype]
            feeds[tensor.name] = rng.integers(lo, hi + 1, tensor.shape).astype(tensor.dtype)
        else:
            feeds[tensor.name] = rng.uniform(-2, 2, tensor.shape).astype(np.float32)
    return feeds


def steps_apart(a: np.ndarray, b: np.ndarray) -> int:
    """Largest difference between two integer outputs, in quantization steps."""
    return int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max()) if a.size else 0
