"""Latency estimation (engine-latency): NAS-Bench-101 model generator, measured latency
dataset, and latency predictors up to our dispatch-level one. docs/latency.md.

    from engine.latency import predict
    predict("models/face_landmark.tflite")          # predicted ms on the fitted adapter

Imports are lazy: `import engine.latency` loads no GPU code.
"""

from __future__ import annotations

import os


def predict(model: str | os.PathLike, adapter: str | None = None, precision: str = "fp32") -> float:
    """Predicted latency (ms) of a .tflite file on `adapter` (default: the fitted one)."""
    from engine.latency.predict import predict_file

    return predict_file(model, adapter, precision).total_ms


__all__ = ["predict"]
