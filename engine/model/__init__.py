"""Model import/export: .tflite flatbuffers <-> graph IR."""

from engine.model.ir import Graph, Op, Quantization, Tensor

__all__ = ["Graph", "Op", "Quantization", "Tensor"]
