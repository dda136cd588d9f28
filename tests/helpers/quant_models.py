"""The converted quantization fixtures (tests/data/quant): seeded inputs, LiteRT's tensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def fixture_input(graph, seed: int = 0) -> np.ndarray:
    """A seeded input in [-1, 1) for the model's input, quantized for an int8 input."""
    t = graph.tensors[graph.inputs[0]]
    x = np.random.default_rng(seed).uniform(-1, 1, t.shape).astype(np.float32)
    if t.dtype != "int8":
        return x
    s, z = t.quantization.scale[0], t.quantization.zero_point[0]
    return np.clip(np.round(x / np.float32(s)) + z, -128, 127).astype(np.int8)


def litert_all(path: Path, x: np.ndarray, resolver: str) -> dict[str, np.ndarray]:
    """Every tensor LiteRT computed, by name."""
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from ai_edge_litert.interpreter import OpResolverType

    kind = {"reference": OpResolverType.BUILTIN_REF, "default": OpResolverType.AUTO}[resolver]
    it = LiteRT(
        model_path=str(path),
        experimental_op_resolver_type=kind,
        experimental_preserve_all_tensors=resolver == "reference",
    )
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    details = it.get_tensor_details() if resolver == "reference" else it.get_output_details()
    return {d["name"]: it.get_tensor(d["index"]).copy() for d in details}
