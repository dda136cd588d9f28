"""Importing quantized models: parameters per tensor and per channel, integer types kept,
and a ModelError naming file, tensor and op for what the engine cannot hold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import ModelError
from engine.model import schema
from engine.model.importer import load_tflite
from engine.model.ir import Graph, Op, Quantization, Tensor, graphs_equal
from engine.model.writer import write_tflite

DATA = Path(__file__).resolve().parents[1] / "data" / "quant"


def test_int8_model_keeps_types_and_parameters():
    g = load_tflite(DATA / "convnet_int8.tflite")
    x = g.tensors[g.inputs[0]]
    assert x.dtype == "int8" and len(x.quantization.scale) == 1
    conv = g.ops[0]
    w, b = g.tensors[conv.inputs[1]], g.tensors[conv.inputs[2]]
    assert (w.dtype, b.dtype) == ("int8", "int32")
    assert len(w.quantization.scale) == w.shape[0] == 40 and w.quantization.axis == 0
    dw = g.tensors[g.ops[1].inputs[1]]  # depthwise weights: per channel along the last dim
    assert dw.quantization.axis == 3 and len(dw.quantization.scale) == dw.shape[3]
    assert all(z == 0 for z in w.quantization.zero_point)
    # bias scale = input scale * weight scale, per channel
    want = np.float32(x.quantization.scale[0]) * np.asarray(w.quantization.scale, np.float32)
    np.testing.assert_allclose(b.quantization.scale, want, rtol=1e-6)


def test_dynamic_range_weights_stay_int8():
    g = load_tflite(DATA / "convnet_dynamic.tflite")
    weights = [g.tensors[op.inputs[1]] for op in g.ops if op.type == "CONV_2D"]
    assert [w.dtype for w in weights] == ["int8"] * 3
    assert g.tensors[g.inputs[0]].dtype == "float32"


def test_quantized_round_trip():
    g = load_tflite(DATA / "unet_int8.tflite")
    assert graphs_equal(g, load_tflite(write_tflite(g))) == []


def _graph(x: Tensor) -> Graph:
    y = Tensor("y", x.shape, "float32")
    return Graph([x, y], [Op("RELU", (0,), (1,))], [0], [1], name="m")


def test_unsupported_type_names_tensor_and_op(monkeypatch):
    monkeypatch.setitem(schema.TENSOR_TYPES, "int4", 17)  # INT4: let the writer emit it
    data = write_tflite(_graph(Tensor("packed", (1, 4), "int4")))
    with pytest.raises(ModelError, match="op #0 RELU: tensor 'packed' has unsupported type INT4"):
        load_tflite(data)


def test_inconsistent_per_channel_parameters_name_tensor_and_op():
    bad = Quantization((0.1, 0.2, 0.3), (0, 0, 0), axis=1)  # 3 scales for a dim of 4
    data = write_tflite(_graph(Tensor("x", (1, 4), "int8", None, bad)))
    with pytest.raises(ModelError, match="op #0 RELU: tensor 'x' has 3 per-channel scales"):
        load_tflite(data)


def test_non_positive_scale_is_refused():
    data = write_tflite(_graph(Tensor("x", (1, 4), "int8", None, Quantization((0.0,), (0,)))))
    with pytest.raises(ModelError, match="tensor 'x' has a quantization scale"):
        load_tflite(data)


def test_custom_quantization_details_are_refused():
    from engine.model.importer import _read_quantization

    class Details:  # a QuantizationParameters table carrying custom details
        def DetailsType(self):
            return 1

    quant, why = _read_quantization(Details(), (1, 4))
    assert quant is None and "custom quantization details" in why
