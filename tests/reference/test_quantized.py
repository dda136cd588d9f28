"""Quantized single ops vs LiteRT's reference kernels (BUILTIN_REF).

Integer kernels must match bit for bit; the float-table activations (LOGISTIC, TANH,
SOFTMAX) within one step (LiteRT's reference kernels use fixed-point
exp; our tables are its optimized kernels' float ones); dynamic-range (hybrid)
kernels to float32 rounding (1e-5 relative).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import ModelError
from engine.reference import Interpreter
from tests.helpers.quant_ops import (
    activation,
    bias_for,
    const,
    int_feeds,
    quant_graph,
    steps_apart,
    weights,
)
from tests.helpers.single_op import assert_close, run_litert

pytest.importorskip("ai_edge_litert")

CONV_ATTRS = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1,
              "dilation_w_factor": 1, "fused_activation_function": "NONE"}  # fmt: skip


def _exact(g, rng, litert_kernels="reference"):
    feeds = int_feeds(g, rng)
    want = run_litert(g, feeds, litert_kernels)["output"]
    got = Interpreter(g).run(feeds)["output"]
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    return got


def _conv_attrs(padding="SAME", stride=1, act="NONE", **extra):
    return {**CONV_ATTRS, "padding": padding, "stride_h": stride, "stride_w": stride,
            "fused_activation_function": act, **extra}  # fmt: skip


@pytest.mark.parametrize("padding,stride", [("SAME", 1), ("VALID", 2), ("SAME", 2)])
@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6"])
def test_conv_2d(padding, stride, act):
    rng = np.random.default_rng(stride * 7 + len(act))
    x = activation("x", (1, 9, 8, 5), 0.04, -7)
    w = weights("w", rng, (6, 3, 3, 5))
    g = quant_graph("CONV_2D", [x, w, bias_for(x, w, rng, 6)], (0.09, 3),
                    _conv_attrs(padding, stride, act))  # fmt: skip
    _exact(g, rng)


def test_conv_2d_uint8_per_tensor():
    rng = np.random.default_rng(3)
    x = activation("x", (1, 6, 6, 3), 0.03, 120, "uint8")
    data = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
    from engine.model.ir import Quantization, Tensor

    w = Tensor("w", (4, 3, 3, 3), "uint8", data, Quantization((0.01,), (131,)))
    b = Tensor("b", (4,), "int32", rng.integers(-500, 500, 4).astype(np.int32),
               Quantization((float(np.float32(0.03 * 0.01)),), (0,)))  # fmt: skip
    g = quant_graph("CONV_2D", [x, w, b], (0.05, 128), _conv_attrs(), out_dtype="uint8")
    _exact(g, rng)


@pytest.mark.parametrize("multiplier", [1, 2])
def test_depthwise_conv_2d(multiplier):
    rng = np.random.default_rng(multiplier)
    x = activation("x", (1, 7, 7, 4), 0.05, 10)
    w = weights("w", rng, (1, 3, 3, 4 * multiplier), axis=3)
    g = quant_graph("DEPTHWISE_CONV_2D", [x, w, bias_for(x, w, rng, 4 * multiplier)],
                    (0.07, -2), _conv_attrs(act="RELU6", depth_multiplier=multiplier))  # fmt: skip
    _exact(g, rng)


@pytest.mark.parametrize("axis", [0, None], ids=["per_channel", "per_tensor"])
def test_fully_connected(axis):
    rng = np.random.default_rng(5)
    x = activation("x", (2, 20), 0.05, -4)
    w = weights("w", rng, (7, 20), axis=axis)
    attrs = {"fused_activation_function": "RELU", "keep_num_dims": False}
    g = quant_graph("FULLY_CONNECTED", [x, w, bias_for(x, w, rng, 7)], (0.2, -20), attrs)
    _exact(g, rng)


def test_transpose_conv():
    rng = np.random.default_rng(6)
    x = activation("x", (1, 5, 5, 6), 0.05, 3)
    w = weights("w", rng, (4, 3, 3, 6))
    shape = const("shape", np.array([1, 10, 10, 4], np.int32))
    attrs = {"padding": "SAME", "stride_h": 2, "stride_w": 2}
    g = quant_graph("TRANSPOSE_CONV", [shape, w, x, bias_for(x, w, rng, 4)], (0.1, 0), attrs,
                    out_shape=(1, 10, 10, 4))  # fmt: skip
    _exact(g, rng)


@pytest.mark.parametrize("op_type", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("shape_b", [(1, 4, 4, 6), (1, 1, 1, 6)], ids=["same", "broadcast"])
def test_binary(op_type, shape_b):
    rng = np.random.default_rng(len(op_type))
    a = activation("a", (1, 4, 4, 6), 0.03, -10)
    b = activation("b", shape_b, 0.07, 25)
    g = quant_graph(op_type, [a, b], (0.06, 4), {"fused_activation_function": "RELU"})
    _exact(g, rng)


@pytest.mark.parametrize("op_type", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool(op_type, padding):
    rng = np.random.default_rng(8)
    x = activation("x", (1, 7, 7, 5), 0.05, -3)
    attrs = {"padding": padding, "stride_h": 2, "stride_w": 2, "filter_height": 3,
             "filter_width": 3, "fused_activation_function": "NONE"}  # fmt: skip
    _exact(quant_graph(op_type, [x], (0.05, -3), attrs), rng)


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("out", [(0.05, -3), (0.02, 11)], ids=["same_grid", "rescaled"])
def test_mean(keep_dims, out):
    rng = np.random.default_rng(9)
    x = activation("x", (1, 7, 5, 6), 0.05, -3)
    axes = const("axes", np.array([1, 2], np.int32))
    _exact(quant_graph("MEAN", [x, axes], out, {"keep_dims": keep_dims}), rng)


def test_concatenation_pad_reshape():
    rng = np.random.default_rng(10)
    a, b = activation("a", (1, 4, 4, 3), 0.05, 7), activation("b", (1, 4, 4, 5), 0.05, 7)
    _exact(quant_graph("CONCATENATION", [a, b], (0.05, 7), {"axis": 3}), rng)
    pads = const("pads", np.array([[0, 0], [1, 2], [2, 0], [0, 0]], np.int32))
    _exact(quant_graph("PAD", [a, pads], (0.05, 7)), rng)
    shape = const("shape", np.array([1, 16, 3], np.int32))
    _exact(quant_graph("RESHAPE", [a, shape], (0.05, 7), {"new_shape": (1, 16, 3)}), rng)


def test_concatenation_needs_one_grid():
    a, b = activation("a", (1, 2, 2, 3), 0.05, 7), activation("b", (1, 2, 2, 3), 0.1, 7)
    g = quant_graph("CONCATENATION", [a, b], (0.05, 7), {"axis": 3})
    with pytest.raises(ModelError, match="op #0 CONCATENATION.*grid"):
        Interpreter(g).run(int_feeds(g, np.random.default_rng(0)))


@pytest.mark.parametrize("align,half", [(False, True), (True, False), (False, False)])
def test_resize_bilinear(align, half):
    rng = np.random.default_rng(11)
    x = activation("x", (1, 5, 4, 3), 0.05, -3)
    size = const("size", np.array([9, 11], np.int32))
    attrs = {"align_corners": align, "half_pixel_centers": half}
    _exact(quant_graph("RESIZE_BILINEAR", [x, size], (0.05, -3), attrs), rng)


@pytest.mark.parametrize(
    "op_type,out",
    [("LOGISTIC", (1 / 256, -128)), ("TANH", (1 / 128, 0)), ("SOFTMAX", (1 / 256, -128))],
)  # fmt: skip
def test_table_activations(op_type, out):
    rng = np.random.default_rng(12)
    x = activation("x", (1, 4, 4, 10), 0.06, 5)
    attrs = {"beta": 1.0} if op_type == "SOFTMAX" else {}
    g = quant_graph(op_type, [x], out, attrs)
    feeds = int_feeds(g, rng)
    got = Interpreter(g).run(feeds)["output"]
    for kernels in ("reference", "builtin"):
        assert steps_apart(got, run_litert(g, feeds, kernels)["output"]) <= 1, kernels


@pytest.mark.parametrize("in_scale,out", [(0.06, (0.03, -20)), (0.5, (0.4, -100)),
                                          (0.002, (0.001, 3))])  # fmt: skip
def test_hard_swish_fixed_point(in_scale, out):
    """Input scales on both sides of 3 / 128 (left- and right-shifted relu-ish factor)."""
    x = activation("x", (1, 4, 4, 16), in_scale, 5)
    _exact(quant_graph("HARD_SWISH", [x], out), np.random.default_rng(21))


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_quantize_from_float(dtype):
    rng = np.random.default_rng(13)
    from engine.model.ir import Tensor

    x = Tensor("x", (1, 6, 6, 3), "float32")
    _exact(quant_graph("QUANTIZE", [x], (0.013, 3 if dtype == "int8" else 130), {},
                       out_dtype=dtype), rng)  # fmt: skip


@pytest.mark.parametrize("src", [("int8", 0.02, -5), ("uint8", 0.02, 123)])
def test_requantize(src):
    rng = np.random.default_rng(14)
    x = activation("x", (1, 5, 5, 4), src[1], src[2], src[0])
    _exact(quant_graph("QUANTIZE", [x], (0.035, 9)), rng)


def test_dequantize():
    rng = np.random.default_rng(15)
    x = activation("x", (1, 5, 5, 4), 0.0123, -17)
    g = quant_graph("DEQUANTIZE", [x], None)
    feeds = int_feeds(g, rng)
    np.testing.assert_array_equal(
        Interpreter(g).run(feeds)["output"], run_litert(g, feeds)["output"]
    )


def test_int16_activations_are_refused():
    x = activation("x", (1, 4, 4, 3), 0.001, 0)
    x = type(x)(x.name, x.shape, "int16", None, x.quantization)
    g = quant_graph("RELU", [x], (0.001, 0), out_dtype="int16")
    with pytest.raises(ModelError, match="op #0 RELU.*int16"):
        Interpreter(g)


def test_quantized_op_without_kernel_is_refused():
    x = activation("x", (1, 4, 4, 3), 0.05, 0)
    g = quant_graph("L2_NORMALIZATION", [x], (1 / 128, 0), out_shape=(1, 4, 4, 3))
    with pytest.raises(ModelError, match="op #0 L2_NORMALIZATION.*'x'"):
        Interpreter(g)


# --- dynamic range: float activations, int8 weights -------------------------------------


def _hybrid(g, rng, tol=1e-5):
    from tests.helpers.single_op import random_feeds

    feeds = random_feeds(g, rng, scale=2.0)
    assert_close(run_litert(g, feeds, "reference"), Interpreter(g).run(feeds), tol)


@pytest.mark.parametrize("axis", [0, None], ids=["per_channel", "per_tensor"])
@pytest.mark.parametrize("stride", [1, 2])
def test_hybrid_conv_2d(axis, stride):
    from engine.model.ir import Tensor

    rng = np.random.default_rng(16 + stride)
    x = Tensor("input0", (2, 7, 6, 5), "float32")
    w = weights("w", rng, (6, 3, 3, 5), axis=axis)
    b = const("b", rng.uniform(-1, 1, 6).astype(np.float32))
    g = quant_graph("CONV_2D", [x, w, b], None, _conv_attrs(stride=stride, act="RELU6"))
    _hybrid(g, rng)


def test_hybrid_depthwise_conv_2d():
    from engine.model.ir import Tensor

    rng = np.random.default_rng(18)
    x = Tensor("input0", (1, 6, 6, 4), "float32")
    w = weights("w", rng, (1, 3, 3, 8), axis=3)
    b = const("b", rng.uniform(-1, 1, 8).astype(np.float32))
    attrs = _conv_attrs(depth_multiplier=2)
    _hybrid(quant_graph("DEPTHWISE_CONV_2D", [x, w, b], None, attrs), rng)


@pytest.mark.parametrize("asymmetric", [False, True])
@pytest.mark.parametrize("axis", [0, None], ids=["per_channel", "per_tensor"])
def test_hybrid_fully_connected(asymmetric, axis):
    from engine.model.ir import Tensor

    rng = np.random.default_rng(19)
    x = Tensor("input0", (3, 24), "float32")
    w = weights("w", rng, (9, 24), axis=axis)
    b = const("b", rng.uniform(-1, 1, 9).astype(np.float32))
    attrs = {"fused_activation_function": "NONE", "keep_num_dims": False,
             "asymmetric_quantize_inputs": asymmetric}  # fmt: skip
    _hybrid(quant_graph("FULLY_CONNECTED", [x, w, b], None, attrs), rng)


def test_hybrid_transpose_conv():
    from engine.model.ir import Tensor

    rng = np.random.default_rng(20)
    x = Tensor("input0", (1, 4, 4, 6), "float32")
    w = weights("w", rng, (5, 2, 2, 6), axis=0)
    shape = const("shape", np.array([1, 8, 8, 5], np.int32))
    attrs = {"padding": "SAME", "stride_h": 2, "stride_w": 2}
    _hybrid(quant_graph("TRANSPOSE_CONV", [shape, w, x], None, attrs, out_shape=(1, 8, 8, 5)), rng)


@pytest.mark.parametrize("op_type", ["FULLY_CONNECTED", "CONV_2D"])
def test_hybrid_rounds_exact_halves_like_litert(op_type):
    """Inputs 0, 255 and k + 0.5 quantize with scale 1 and zero point -128: each k + 0.5
    lands exactly on a half; identity weights read the levels back."""
    from engine.model.ir import Quantization, Tensor

    n = 24
    x = np.zeros((1, n), np.float32)
    x[0, 1], x[0, 2:] = 255, np.arange(n - 2) + 0.5
    eye = np.eye(n, dtype=np.int8)
    if op_type == "FULLY_CONNECTED":
        w = Tensor("w", (n, n), "int8", eye, Quantization((1.0,), (0,)))
        inp = Tensor("input0", (1, n), "float32")
        attrs = {"fused_activation_function": "NONE", "keep_num_dims": False,
                 "asymmetric_quantize_inputs": True}  # fmt: skip
    else:  # two different scales select the per-channel (asymmetric) path
        scales = (1.0, 2.0) + (1.0,) * (n - 2)
        w = Tensor("w", (n, 1, 1, n), "int8", eye.reshape(n, 1, 1, n),
                   Quantization(scales, (0,) * n, 0))  # fmt: skip
        inp, x, attrs = Tensor("input0", (1, 1, 1, n), "float32"), x.reshape(1, 1, 1, n), CONV_ATTRS
    g = quant_graph(op_type, [inp, w, const("b", np.zeros(n, np.float32))], None, attrs)
    want = run_litert(g, {"input0": x}, "reference")["output"]
    np.testing.assert_array_equal(Interpreter(g).run({"input0": x})["output"], want)


# --- every other integer kernel against LiteRT: activations, MAXIMUM/MINIMUM, PADV2, moves ---
# Unary ops see every value of the input type once (ties of the rescale included); moves
# and the binary ops see random values over the whole range, bit for bit.

EVERY_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 4, 8, 8)


def _quantized(g, grids: dict[str, tuple], dtype: str = "int8"):
    """`g` (a float single-op graph) with its non-constant float tensors on integer grids:
    grids["in"] for inputs, grids["out"] for outputs (scale, zero point)."""
    from dataclasses import replace

    from engine.model.ir import Graph, Quantization

    tensors = list(g.tensors)
    for role, ids in (("in", g.inputs), ("out", g.outputs)):
        scale, zero = grids[role]
        for t in ids:
            if tensors[t].dtype == "float32":
                tensors[t] = replace(tensors[t], dtype=dtype,
                                     quantization=Quantization((scale,), (zero,)))  # fmt: skip
    return Graph(tensors, g.ops, g.inputs, g.outputs, name=f"quant:{g.name}")


def _exact_all(g, feeds, litert_kernels="reference"):
    want = run_litert(g, feeds, litert_kernels)
    got = Interpreter(g).run(feeds)
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name].dtype == value.dtype, (name, got[name].dtype, value.dtype)
        np.testing.assert_array_equal(got[name], value, err_msg=name)


UNARY_CASES = [  # (op, attrs, dtype); LiteRT has no uint8 ELU
    (op, attrs, dtype)
    for op, attrs in [("RELU", {}), ("RELU6", {}), ("RELU_N1_TO_1", {}), ("ELU", {}),
                      ("LEAKY_RELU", {"alpha": 0.2}), ("LEAKY_RELU", {"alpha": 0.01})]
    for dtype in ("int8", "uint8")
    if (op, dtype) != ("ELU", "uint8")
]  # fmt: skip


@pytest.mark.parametrize("op_type,attrs,dtype", UNARY_CASES,
                         ids=[f"{o}-{a.get('alpha', '')}-{d}" for o, a, d in UNARY_CASES])  # fmt: skip
@pytest.mark.parametrize(
    "grids",
    [{"in": (0.05, -3), "out": (0.05, -3)}, {"in": (0.05, -3), "out": (0.03, 7)},
     {"in": (1 / 32, 0), "out": (1 / 16, -1)}],  # power-of-two scales: exact ties
    ids=["same_grid", "rescaled", "ties"],
)  # fmt: skip
def test_unary_every_value(op_type, attrs, grids, dtype):
    from tests.helpers.single_op import single_op_graph

    if dtype == "uint8":  # the same grids around the uint8 range's middle
        grids = {k: (s, z + 128) for k, (s, z) in grids.items()}
    g = _quantized(single_op_graph(op_type, [(1, 4, 8, 8)], attrs), grids, dtype)
    x = EVERY_INT8.astype(np.int16) + (128 if dtype == "uint8" else 0)
    # LiteRT's reference resolver has no ELU: its builtin kernel is the oracle there
    _exact_all(g, {"input0": x.astype(dtype)}, "builtin" if op_type == "ELU" else "reference")


@pytest.mark.parametrize("op_type", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("shape_b", [(1, 4, 5, 6), (1, 1, 1, 6), (1, 4, 5, 1)], ids=str)
def test_maximum_minimum(op_type, shape_b):
    from tests.helpers.single_op import single_op_graph

    g = single_op_graph(op_type, [(1, 4, 5, 6), shape_b])
    g = _quantized(g, {"in": (0.04, 5), "out": (0.04, 5)})
    rng = np.random.default_rng(len(shape_b) + shape_b[-1])
    _exact_all(g, int_feeds(g, rng))


@pytest.mark.parametrize("value", [-128, 5, 127])
def test_padv2(value):
    from engine.model.ir import Quantization, Tensor

    x = activation("x", (1, 4, 5, 3), 0.05, 7)
    pads = const("pads", np.array([[0, 0], [1, 2], [0, 3], [0, 1]], np.int32))
    fill = Tensor("fill", (), "int8", np.array(value, np.int8), Quantization((0.05,), (7,)))
    g = quant_graph("PADV2", [x, pads, fill], (0.05, 7))
    _exact_all(g, int_feeds(g, np.random.default_rng(value & 0xFF)))


def _i32(values):
    return np.array(values, np.int32)


MOVES = [  # (op, float single_op_graph inputs, attrs, outputs)
    ("PACK", [(3, 4), (3, 4)], {"values_count": 2, "axis": 1}, 1),
    ("SQUEEZE", [(1, 4, 1, 3)], {"squeeze_dims": (2,)}, 1),
    ("EXPAND_DIMS", [(4, 3), _i32([1])], {}, 1),
    ("DEPTH_TO_SPACE", [(1, 3, 4, 8)], {"block_size": 2}, 1),
    ("SPACE_TO_DEPTH", [(1, 6, 4, 3)], {"block_size": 2}, 1),
    ("TRANSPOSE", [(1, 4, 5, 3), _i32([0, 2, 1, 3])], {}, 1),
    ("SPLIT", [_i32(3), (1, 4, 6, 6)], {"num_splits": 3}, 3),
    ("SLICE", [(2, 5, 6, 4), _i32([0, 1, 2, 0]), _i32([2, 3, -1, 2])], {}, 1),
    ("STRIDED_SLICE", [(2, 5, 6, 4), _i32([1, 4, 5, 3]), _i32([0, 0, 0, 0]),
                       _i32([-1, -1, -2, -1])], {"end_mask": 0b0101}, 1),
    ("GATHER", [(1, 6, 3), _i32([5, 0, 2, 2])], {"axis": 1, "batch_dims": 0}, 1),
    ("RESIZE_NEAREST_NEIGHBOR", [(1, 5, 4, 3), _i32([9, 11])],
     {"align_corners": False, "half_pixel_centers": True}, 1),
    ("RESIZE_NEAREST_NEIGHBOR", [(1, 5, 4, 3), _i32([9, 11])],
     {"align_corners": True, "half_pixel_centers": True}, 1),
    ("RESIZE_NEAREST_NEIGHBOR", [(1, 4, 6, 3), _i32([8, 4])],
     {"align_corners": True, "half_pixel_centers": False}, 1),
]  # fmt: skip


def test_every_move_has_a_case():
    """A new entry of the moves (engine/model/op_specs.py) needs a case here."""
    from engine.reference.quantized.shape import MOVES as KERNEL_MOVES

    assert set(KERNEL_MOVES) - {"RESHAPE"} == {op for op, *_ in MOVES} | NO_FLOAT_KERNEL


# Moves the op table lists whose float kernel the reference lacks: the integer path (which
# runs the float kernel on the integers) refuses them too, at run time.
NO_FLOAT_KERNEL = {"UNPACK", "SPLIT_V"}


@pytest.mark.parametrize("op_type", sorted(NO_FLOAT_KERNEL))
def test_move_without_a_float_kernel_is_refused(op_type):
    from tests.helpers.single_op import single_op_graph

    inputs, attrs, outs = {
        "UNPACK": ([(2, 4, 3)], {"num": 2, "axis": 0}, [(4, 3), (4, 3)]),
        "SPLIT_V": ([(1, 4, 6), _i32([2, 4]), _i32(2)], {"num_splits": 2}, [(1, 4, 2), (1, 4, 4)]),
    }[op_type]
    g = single_op_graph(op_type, inputs, attrs, out_shapes=outs)
    g = _quantized(g, {"in": (0.05, 7), "out": (0.05, 7)})
    with pytest.raises(ModelError, match=f"{op_type} has no reference kernel"):
        Interpreter(g).run(int_feeds(g, np.random.default_rng(0)))


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("op_type,inputs,attrs,outputs", MOVES, ids=[
    f"{m[0]}-{i}" for i, m in enumerate(MOVES)])  # fmt: skip
def test_move(op_type, inputs, attrs, outputs, dtype):
    from tests.helpers.single_op import single_op_graph

    grid = (0.05, 7 if dtype == "int8" else 135)
    g = single_op_graph(op_type, inputs, attrs, num_outputs=outputs)
    g = _quantized(g, {"in": grid, "out": grid}, dtype)
    _exact_all(g, int_feeds(g, np.random.default_rng(len(op_type) * outputs)))


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("out", [(0.05, -3), (0.02, 11)], ids=["same_grid", "rescaled"])
def test_mean_over_channels(keep_dims, out):
    """MEAN over the channel axis (the GPU's channel-axis case, tests/gpu/test_quant_io.py)."""
    rng = np.random.default_rng(19)
    x = activation("x", (1, 5, 4, 6), 0.05, -3)
    axes = const("axes", np.array([3], np.int32))
    _exact(quant_graph("MEAN", [x, axes], out, {"keep_dims": keep_dims}), rng)
