"""Numpy reference interpreter: runs a Graph op by op with the kernels in the registry.

Inputs:  a Graph (engine.model.ir), compute dtype float32 (default) or float64.
Outputs: run() -> {output tensor name: array}; run_all() -> {tensor id: array}.
Options: strict_shapes (default True) checks every computed shape against the graph.
Usage:   Interpreter(load_tflite(path)).run({"input": frame})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph
from engine.model.layout import phwc4_shape
from engine.reference import quantized, registry
from engine.reference.fused import has_extras, run_with_extras


def same_layout(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Both shapes map to the same PHWC4 shape (see engine/model/layout.py)."""
    return len(a) <= 4 and len(b) <= 4 and phwc4_shape(a) == phwc4_shape(b)


_FLOAT_DTYPES = {"float16", "float32", "float64"}


def supported_ops() -> set[str]:
    """Op types (builtin names and custom codes) the reference interpreter can run."""
    return registry.supported_ops()


class Interpreter:
    """Runs a Graph with numpy; the oracle for GPU kernels and the CPU fallback."""

    def __init__(self, graph: Graph, dtype=np.float32, strict_shapes: bool = True):
        self.graph = graph
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"compute dtype must be float32 or float64, not {self.dtype}")
        self.strict_shapes = strict_shapes
        self._name = name = graph.name or "<graph>"
        self._kernels = []
        for i, op in enumerate(graph.ops):
            # Integer and dynamic-range ops get TFLite's quantized semantics; an op whose
            # tensors need them and that has no such kernel is a ModelError here.
            fn = quantized.bind(op, graph, i) or registry.kernel(op.type)
            if fn is None:
                raise ModelError(f"{name}: op #{i} {op.type} has no reference kernel")
            self._kernels.append(fn)
        # Constants are converted once; float data moves to the compute dtype.
        self._constants = {
            t: self._convert(tensor.data, tensor.dtype)
            for t, tensor in enumerate(graph.tensors)
            if tensor.data is not None
        }

    def _convert(self, a: np.ndarray, dtype: str) -> np.ndarray:
        a = np.asarray(a)
        return a.astype(self.dtype) if dtype in _FLOAT_DTYPES else a.astype(dtype, copy=False)

    def _feeds(
        self, feeds: Mapping[str, np.ndarray] | Sequence[np.ndarray]
    ) -> dict[int, np.ndarray]:
        g = self.graph
        names = [g.tensors[t].name for t in g.inputs]
        if isinstance(feeds, np.ndarray):  # one array for a one-input graph
            feeds = [feeds]
        if isinstance(feeds, Mapping):
            unknown = sorted(set(feeds) - set(names))
            missing = [n for n in names if n not in feeds]
            if unknown or missing:
                raise ValueError(f"inputs: unknown {unknown}, missing {missing}; expected {names}")
            arrays = [feeds[n] for n in names]
        else:
            arrays = list(feeds)
            if len(arrays) != len(names):
                raise ValueError(f"expected {len(names)} inputs {names}, got {len(arrays)}")
        values = {}
        for t, a in zip(g.inputs, arrays, strict=True):
            tensor, a = g.tensors[t], np.asarray(a)
            if a.shape != tuple(tensor.shape):
                raise ValueError(f"input {tensor.name!r}: shape {a.shape}, expected {tensor.shape}")
            want = np.dtype(tensor.dtype)
            # Same kind only: a uint8 frame fed to a float model is a bug, not a cast.
            if a.dtype.kind != want.kind:
                raise ValueError(f"input {tensor.name!r}: dtype {a.dtype}, expected {want}")
            values[t] = self._convert(a, tensor.dtype)
        return values

    def run_all(
        self, feeds: Mapping[str, np.ndarray] | Sequence[np.ndarray]
    ) -> dict[int, np.ndarray]:
        """Every tensor's value (constants, inputs, intermediates, outputs) by tensor id."""
        g = self.graph
        values: dict[int, np.ndarray] = dict(self._constants)
        values.update(self._feeds(feeds))
        for i, (op, fn) in enumerate(zip(g.ops, self._kernels, strict=True)):
            try:
                args = [values[t] if t >= 0 else None for t in op.inputs]
            except KeyError as e:
                raise ModelError(
                    f"{self._name}: op #{i} {op.type} reads tensor {e} before it is written"
                ) from None
            # Ops rewritten by graph transforms (explicit padding, epilogues) go through
            # fused.py, which runs the plain TFLite kernel plus the extra steps.
            outs = run_with_extras(fn, op, args, values) if has_extras(op) else fn(op, args)
            if len(outs) != len(op.outputs):
                raise ModelError(
                    f"{self._name}: op #{i} {op.type} produced {len(outs)} outputs, "
                    f"expected {len(op.outputs)}"
                )
            for t, y in zip(op.outputs, outs, strict=True):
                y, tensor = np.asarray(y), g.tensors[t]  # numpy ufuncs turn 0-d into scalars
                if y.shape != tuple(tensor.shape) and same_layout(y.shape, tensor.shape):
                    # A transform dropped an identity RESHAPE before this op: same PHWC4
                    # data, other rank. Give the tensor the shape the graph declares.
                    y = y.reshape(tensor.shape)
                if self.strict_shapes and y.shape != tuple(tensor.shape):
                    raise ModelError(
                        f"{self._name}: op #{i} {op.type} made {tensor.name!r} {y.shape}, "
                        f"the graph says {tuple(tensor.shape)}"
                    )
                values[t] = y
        return values

    def run(self, feeds: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        """Run the graph; returns {output tensor name: array}. Feeds by name or in input order."""
        values = self.run_all(feeds)
        return {self.graph.tensors[t].name: values[t] for t in self.graph.outputs}
