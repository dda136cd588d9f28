"""The reference Interpreter: load-time checks, feeds validation, run/run_all, and a
multi-op graph (written, re-imported, run on LiteRT) end to end."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import ModelError
from engine.model.ir import Graph, Op, Quantization, Tensor
from engine.reference import Interpreter, supported_ops
from tests.helpers.single_op import assert_close, random_feeds, single_op_graph

REQUIRED = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "Convolution2DTransposeBias",
    "FULLY_CONNECTED", "ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "RELU", "RELU6",
    "RELU_N1_TO_1", "PRELU", "LEAKY_RELU", "HARD_SWISH", "LOGISTIC", "TANH", "ELU", "PAD",
    "MAX_POOL_2D", "AVERAGE_POOL_2D", "MEAN", "RESHAPE", "CONCATENATION", "SPLIT", "SLICE",
    "STRIDED_SLICE", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "DEPTH_TO_SPACE",
    "SPACE_TO_DEPTH", "SOFTMAX", "TRANSPOSE",
}  # fmt: skip


def _chain() -> Graph:
    """input -> CONV_2D(RELU6) -> ADD(const) -> HARD_SWISH -> MEAN(axes 1,2) -> output."""
    rng = np.random.default_rng(0)
    t = [
        Tensor("image", (1, 6, 6, 3), "float32"),
        Tensor("w", (4, 3, 3, 3), "float32", rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)),
        Tensor("b", (4,), "float32", rng.uniform(-1, 1, 4).astype(np.float32)),
        Tensor("conv", (1, 3, 3, 4), "float32"),
        Tensor("shift", (4,), "float32", np.array([0.5, -1, 2, 0], np.float32)),
        Tensor("sum", (1, 3, 3, 4), "float32"),
        Tensor("act", (1, 3, 3, 4), "float32"),
        Tensor("axes", (2,), "int32", np.array([1, 2], np.int32)),
        Tensor("pooled", (1, 4), "float32"),
    ]
    conv = {"padding": "SAME", "stride_w": 2, "stride_h": 2, "fused_activation_function": "RELU6"}
    ops = [
        Op("CONV_2D", (0, 1, 2), (3,), conv),
        Op("ADD", (3, 4), (5,), {"fused_activation_function": "NONE"}),
        Op("HARD_SWISH", (5,), (6,)),
        Op("MEAN", (6, 7), (8,), {"keep_dims": False}),
    ]
    return Graph(t, ops, [0], [8], name="chain.tflite")


def test_supported_ops_cover_the_required_list():
    assert REQUIRED <= supported_ops()


def test_unsupported_op_fails_at_load():
    g = _chain()
    g.ops[2] = Op("SIN", (5,), (6,))
    with pytest.raises(ModelError, match=r"chain.tflite: op #2 SIN has no reference"):
        Interpreter(g)


def test_run_by_name_and_by_position_agree():
    it = Interpreter(_chain())
    x = np.random.default_rng(1).uniform(-1, 1, (1, 6, 6, 3)).astype(np.float32)
    by_name, by_pos = it.run({"image": x}), it.run([x])
    assert list(by_name) == ["pooled"] and by_name["pooled"].dtype == np.float32
    np.testing.assert_array_equal(by_name["pooled"], by_pos["pooled"])


def test_float64_mode_matches_float32():
    g, x = _chain(), np.random.default_rng(2).uniform(-1, 1, (1, 6, 6, 3)).astype(np.float32)
    y64, y32 = Interpreter(g, dtype=np.float64).run([x]), Interpreter(g).run([x])
    assert y64["pooled"].dtype == np.float64
    assert_close(y64, y32)


def test_run_all_returns_every_tensor():
    g = _chain()
    values = Interpreter(g).run_all([np.zeros((1, 6, 6, 3), np.float32)])
    assert sorted(values) == list(range(len(g.tensors)))
    for i, t in enumerate(g.tensors):
        assert values[i].shape == t.shape, t.name
    np.testing.assert_array_equal(values[7], [1, 2])  # int constants keep their dtype


@pytest.mark.parametrize(
    "feeds,match",
    [
        (
            {"picture": np.zeros((1, 6, 6, 3), np.float32)},
            r"unknown \['picture'\], missing \['image'\]",
        ),
        ({"image": np.zeros((1, 6, 5, 3), np.float32)}, r"input 'image': shape \(1, 6, 5, 3\)"),
        ({"image": np.zeros((1, 6, 6, 3), np.uint8)}, r"input 'image': dtype uint8"),
        ([], r"expected 1 inputs \['image'\], got 0"),
    ],
)
def test_bad_feeds_name_the_input(feeds, match):
    with pytest.raises(ValueError, match=match):
        Interpreter(_chain()).run(feeds)


def test_shape_mismatch_is_reported():
    g = _chain()
    g.tensors[3] = Tensor("conv", (1, 6, 6, 4), "float32")
    with pytest.raises(ModelError, match=r"op #0 CONV_2D made 'conv' \(1, 3, 3, 4\)"):
        Interpreter(g).run([np.zeros((1, 6, 6, 3), np.float32)])


def test_kernel_error_names_the_op():
    g = single_op_graph(
        "DEPTHWISE_CONV_2D",
        [(1, 2, 2, 3), np.zeros((1, 5, 5, 3), np.float32)],
        {"padding": "VALID"},
        out_shapes=[(1, 1, 1, 3)],
    )
    with pytest.raises(ModelError, match="DEPTHWISE_CONV_2D: window 5x5"):
        Interpreter(g).run([np.zeros((1, 2, 2, 3), np.float32)])


def test_chain_matches_litert_and_survives_reimport():
    pytest.importorskip("ai_edge_litert")
    from engine.model.importer import load_tflite
    from engine.model.writer import write_tflite
    from tests.helpers.single_op import run_litert

    g = _chain()
    feeds = random_feeds(g, np.random.default_rng(3), scale=2.0)
    want = run_litert(g, feeds)
    assert_close(want, Interpreter(g).run(feeds))
    assert_close(want, Interpreter(load_tflite(write_tflite(g)), np.float64).run(feeds))


def test_custom_op_survives_reimport():
    from engine.model.importer import load_tflite
    from engine.model.writer import write_tflite

    rng = np.random.default_rng(4)
    w, b = rng.uniform(-1, 1, (5, 4, 4, 3)).astype(np.float32), np.ones(5, np.float32)
    attrs = {"padding": "SAME", "stride_w": 2, "stride_h": 2}
    g = single_op_graph("Convolution2DTransposeBias", [(1, 3, 4, 3), w, b], attrs, custom=True)
    # SAME: pad_total = max(0, k - (in - 1) % s - 1): 3 for in=3 (odd), 2 for in=4.
    assert g.tensors[g.outputs[0]].shape == (1, 5, 8, 5)
    feeds = random_feeds(g, rng)
    again = load_tflite(write_tflite(g))
    np.testing.assert_array_equal(
        Interpreter(again).run(feeds)["output0"], Interpreter(g).run(feeds)["output0"]
    )


def test_single_array_feed():
    it, x = Interpreter(_chain()), np.ones((1, 6, 6, 3), np.float32)
    np.testing.assert_array_equal(it.run(x)["pooled"], it.run({"image": x})["pooled"])


def test_float_and_quantized_tensors_in_one_op_are_refused_at_load():
    # Integer kernels run int8 ops (tests/reference/test_quantized.py); an op mixing a
    # float activation with an int8 one has no TFLite meaning.
    g = _chain()
    g.tensors[6] = Tensor("act", (1, 3, 3, 4), "int8", quantization=Quantization((0.1,), (0,)))
    with pytest.raises(ModelError, match=r"op #2 HARD_SWISH: float tensor 'sum' and quantized"):
        Interpreter(g)


def test_transform_extras_are_applied():
    # Graph transforms add explicit_padding / epilogue attrs (engine/reference/fused.py).
    g = _chain()
    conv = g.ops[0]
    attrs = {**conv.attrs, "padding": "VALID", "explicit_padding": (0, 1, 0, 1)}
    attrs["epilogue"] = (("add", 4), ("act", "RELU6"))
    g.ops[0] = Op("CONV_2D", conv.inputs, conv.outputs, attrs)
    x = np.random.default_rng(5).uniform(-1, 1, (1, 6, 6, 3)).astype(np.float32)
    got = Interpreter(g).run_all([x])[3]
    want = Interpreter(_chain()).run_all([x])  # SAME pads (0, 1) here: same conv
    np.testing.assert_allclose(got, np.clip(want[3] + want[4], 0, 6), rtol=1e-6, atol=1e-6)
