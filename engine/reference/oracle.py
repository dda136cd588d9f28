"""Run a .tflite model on numpy inputs with the engine's reference interpreter or LiteRT.

- input: a model path and {input name: array} (or arrays in input order)
- output: {output tensor name: array}
- options: backend "reference" (engine.reference, the default), "litert" (ai-edge-litert,
  the independent oracle) or "auto" (reference when the engine can run the model)
- usage: `outputs = run_model("models/face_detection_short_range.tflite", {"input": x})`
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.errors import ModelError

BACKENDS = ("reference", "litert", "auto")

Feeds = Mapping[str, np.ndarray] | Sequence[np.ndarray]


@lru_cache(maxsize=8)
def _reference(path: str):
    from engine.model.importer import load_tflite
    from engine.reference import Interpreter

    return Interpreter(load_tflite(path))


@lru_cache(maxsize=8)
def _litert(path: str):
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ModelError("LiteRT is not installed: pip install ai-edge-litert") from e
    try:
        it = Interpreter(model_path=path)
        it.allocate_tensors()
    except (RuntimeError, ValueError) as e:
        raise ModelError(f"{path}: LiteRT cannot load the model ({e})") from e
    return it


def run_litert(path: str | Path, feeds: Feeds) -> dict[str, np.ndarray]:
    """Run with LiteRT; returns {output name: array} (copies)."""
    it = _litert(str(path))
    details = it.get_input_details()
    if isinstance(feeds, Mapping):
        arrays = [feeds[d["name"]] for d in details]
    else:
        arrays = list(feeds)
    for d, a in zip(details, arrays, strict=True):
        it.set_tensor(d["index"], np.asarray(a, dtype=d["dtype"]))
    it.invoke()
    return {d["name"]: it.get_tensor(d["index"]).copy() for d in it.get_output_details()}


def run_reference(path: str | Path, feeds: Feeds) -> dict[str, np.ndarray]:
    """Run with the engine's numpy reference interpreter."""
    return _reference(str(path)).run(feeds)


def run_model(path: str | Path, feeds: Feeds, backend: str = "reference") -> dict[str, np.ndarray]:
    """Run the model at `path` on `feeds` with the chosen backend."""
    if backend == "reference":
        return run_reference(path, feeds)
    if backend == "litert":
        return run_litert(path, feeds)
    if backend == "auto":
        try:
            _reference(str(path))
        except (ImportError, ModelError):
            return run_litert(path, feeds)
        return run_reference(path, feeds)
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
