"""Each transform: applied and declined cases; transformed graphs give the reference
interpreter's original outputs (hand-made graphs and every fetched model)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.importer import load_tflite
from engine.transforms import KERNEL_PASSES, PASSES, run_with_log
from engine.transforms.drop_identities import drop_identities
from engine.transforms.fold_constants import fold_mul_add
from engine.transforms.fuse import fuse_activations, fuse_elementwise
from engine.transforms.merge_pad import merge_pad
from tests.helpers.files import fetched_models
from tests.helpers.transforms import CONV, RNG, Builder, same_outputs


def test_fuse_activation_and_residual_add():
    b = Builder()
    x = b.tensor((1, 6, 6, 4))
    c = b.conv(x, 4, 4, (1, 6, 6, 4))
    r = b.op("RELU", (c,), (1, 6, 6, 4))
    c2 = b.conv(r, 4, 4, (1, 6, 6, 4))
    s = b.op("ADD", (c2, r), (1, 6, 6, 4), fused_activation_function="RELU6")
    g = b.graph([x], [s])
    g1, res = fuse_activations(g)
    assert res.applied == 1 and len(g1.ops) == 3
    g2, res = fuse_elementwise(g1)
    assert res.applied == 1 and [op.type for op in g2.ops] == ["CONV_2D", "CONV_2D"]
    assert g2.ops[1].attrs["epilogue"] == (("add", r), ("act", "RELU6"))
    same_outputs(g, g2)


def test_fusion_declined_when_producer_output_has_two_readers():
    b = Builder()
    x = b.tensor((1, 5, 5, 3))
    c = b.conv(x, 3, 3, (1, 5, 5, 3))
    r = b.op("RELU", (c,), (1, 5, 5, 3))
    s = b.op("ADD", (c, r), (1, 5, 5, 3), fused_activation_function="NONE")
    g = b.graph([x], [s])
    g1, res = fuse_activations(g)
    assert res.applied == 0
    same_outputs(g, g1)


def test_prelu_fused_as_epilogue():
    b = Builder()
    x = b.tensor((1, 4, 4, 6))
    c = b.conv(x, 6, 6, (1, 4, 4, 6))
    alpha = b.const(RNG.uniform(0, 0.5, (1, 1, 6)).astype(np.float32))
    p = b.op("PRELU", (c, alpha), (1, 4, 4, 6))
    g = b.graph([x], [p])
    g1, res = fuse_activations(g)
    assert res.applied == 1 and g1.ops[0].attrs["epilogue"] == (("prelu", alpha),)
    same_outputs(g, g1)


@pytest.mark.parametrize(
    "reader", ["CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D"]
)
def test_merge_pad(reader):
    b = Builder()
    x = b.tensor((1, 7, 6, 4))
    pads = b.const(np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32))
    p = b.op("PAD", (x, pads), (1, 10, 9, 4))
    if reader == "CONV_2D":
        y = b.conv(p, 4, 5, (1, 4, 4, 5), padding="VALID", stride_w=2, stride_h=2)
    elif reader == "DEPTHWISE_CONV_2D":
        w = b.const(RNG.standard_normal((1, 3, 3, 4)).astype(np.float32))
        y = b.op("DEPTHWISE_CONV_2D", (p, w, -1), (1, 10, 9, 4), **{**CONV, "depth_multiplier": 1})
    else:
        y = b.op(reader, (p,), (1, 5, 4, 4), padding="VALID", stride_w=2, stride_h=2,
                 filter_width=2, filter_height=2, fused_activation_function="NONE")  # fmt: skip
    g = b.graph([x], [y])
    g1, res = merge_pad(g)
    assert res.applied == 1 and len(g1.ops) == 1
    assert "explicit_padding" in g1.ops[0].attrs
    same_outputs(g, g1)


def test_merge_pad_declines_channel_padding():
    b = Builder()
    x = b.tensor((1, 4, 4, 4))
    pads = b.const(np.array([[0, 0], [0, 0], [0, 0], [0, 4]], np.int32))
    p = b.op("PAD", (x, pads), (1, 4, 4, 8))
    y = b.conv(p, 8, 4, (1, 4, 4, 4))
    g1, res = merge_pad(b.graph([x], [y]))
    assert res.applied == 0 and "spatial" in res.declined[0]


@pytest.mark.parametrize("kind", ["MUL", "ADD"])
def test_fold_mul_add_into_conv(kind):
    b = Builder()
    x = b.tensor((1, 5, 5, 3))
    c = b.conv(x, 3, 6, (1, 5, 5, 6))
    k = b.const(RNG.uniform(0.5, 2, (6,)).astype(np.float32))
    y = b.op(kind, (c, k), (1, 5, 5, 6), fused_activation_function="RELU")
    g = b.graph([x], [y])
    g1, res = fold_mul_add(g)
    assert res.applied == 1 and len(g1.ops) == 1
    assert g1.ops[0].attrs["fused_activation_function"] == "RELU"
    same_outputs(g, g1)


def test_drop_identity_reshape_and_decline_graph_output():
    b = Builder()
    x = b.tensor((1, 4, 4, 8))
    c = b.conv(x, 8, 8, (1, 4, 4, 8))
    r = b.op("RESHAPE", (c, b.const(np.array([4, 4, 8], np.int32))), (4, 4, 8))
    y = b.op("RELU", (r,), (4, 4, 8))
    r2 = b.op("RESHAPE", (y, b.const(np.array([1, 4, 4, 8], np.int32))), (1, 4, 4, 8))
    g = b.graph([x], [r2])
    g1, res = drop_identities(g)
    assert res.applied == 1 and res.declined == ["#2 RESHAPE writes a graph output"]
    same_outputs(g, g1)


@pytest.mark.parametrize("kernel_passes", [False, True], ids=["passes", "with-kernel-passes"])
@pytest.mark.parametrize("path", fetched_models(), ids=[p.stem for p in fetched_models()])
def test_all_transforms_keep_model_outputs(path, kernel_passes):
    """Every class runs PASSES; a class of tile_tables.FUSED_TILES adds KERNEL_PASSES."""
    graph = load_tflite(path)
    after, log = run_with_log(graph, PASSES + (KERNEL_PASSES if kernel_passes else ()))
    assert len(after.ops) < len(graph.ops)
    same_outputs(graph, after)


def test_fuse_input_scale_squeeze_excite():
    """x -> mean-pool -> 1x1 conv -> sigmoid gate; MUL(x, gate) -> 1x1 conv reads x * gate."""
    from engine.transforms.fuse import fuse_input_scale

    b = Builder()
    x = b.tensor((1, 6, 6, 8))
    pooled = b.op("AVERAGE_POOL_2D", (x,), (1, 1, 1, 8), padding="VALID", stride_w=6,
                  stride_h=6, filter_width=6, filter_height=6, fused_activation_function="NONE")  # fmt: skip
    gate = b.conv(pooled, 8, 8, (1, 1, 1, 8), k=1)
    g = b.op("LOGISTIC", (gate,), (1, 1, 1, 8))
    m = b.op("MUL", (x, g), (1, 6, 6, 8), fused_activation_function="NONE")
    y = b.conv(m, 8, 5, (1, 6, 6, 5), k=1)
    graph = b.graph([x], [y])
    fused, res = fuse_input_scale(graph)
    assert res.applied == 1 and "MUL" not in [op.type for op in fused.ops]
    assert fused.ops[-1].attrs["input_scale"] == g and fused.ops[-1].inputs[0] == x
    same_outputs(graph, fused)
    declined, res = fuse_input_scale(b.graph([x], [m, y]))  # the MUL output is a graph output
    assert res.applied == 0


@pytest.mark.parametrize("pad_channels", [0, 4])
def test_max_pool_shortcut_folded_into_the_residual_add(pad_channels):
    b = Builder()
    x = b.tensor((1, 8, 6, 4))
    c = b.conv(x, 4, 4 + pad_channels, (1, 4, 3, 4 + pad_channels), stride_w=2, stride_h=2)
    pool = b.op("MAX_POOL_2D", (x,), (1, 4, 3, 4), padding="VALID", stride_w=2, stride_h=2,
                filter_width=2, filter_height=2, fused_activation_function="NONE")  # fmt: skip
    residual = pool
    if pad_channels:
        pads = b.const(np.array([[0, 0], [0, 0], [0, 0], [0, pad_channels]], np.int32))
        residual = b.op("PAD", (pool, pads), (1, 4, 3, 4 + pad_channels))
    s = b.op("ADD", (c, residual), (1, 4, 3, 4 + pad_channels), fused_activation_function="RELU")
    g = b.graph([x], [s])
    g1, res = fuse_elementwise(g)
    assert res.applied == 1 and [op.type for op in g1.ops] == ["CONV_2D"]
    assert g1.ops[0].attrs["epilogue"] == (("add_pool2", x), ("act", "RELU"))
    same_outputs(g, g1)  # the reference's MAX_POOL_2D kernel against the fused step


def test_max_pool_shortcut_kept_when_the_pool_has_another_reader():
    b = Builder()
    x = b.tensor((1, 8, 8, 4))
    c = b.conv(x, 4, 4, (1, 4, 4, 4), stride_w=2, stride_h=2)
    pool = b.op("MAX_POOL_2D", (x,), (1, 4, 4, 4), padding="VALID", stride_w=2, stride_h=2,
                filter_width=2, filter_height=2, fused_activation_function="NONE")  # fmt: skip
    s = b.op("ADD", (c, pool), (1, 4, 4, 4), fused_activation_function="NONE")
    t = b.op("MUL", (pool, pool), (1, 4, 4, 4), fused_activation_function="NONE")
    g = b.graph([x], [s, t])
    g1, res = fuse_elementwise(g)
    assert "MAX_POOL_2D" in [op.type for op in g1.ops]
    assert all(step[0] != "add_pool2" for op in g1.ops for step in op.attrs.get("epilogue", ()))
    same_outputs(g, g1)


def test_drop_identity_reshape_before_any_unary_op():
    """Every op of the element-wise table reads its input through the layout only (NEG,
    RSQRT, GELU joined the RELU family when the lists became the op table)."""
    b = Builder()
    x = b.tensor((1, 1, 1, 8))
    r = b.op("RESHAPE", (x, b.const(np.array([1, 8], np.int32))), (1, 8))
    g = b.graph([x], [b.op("NEG", (r,), (1, 8))])
    g1, res = drop_identities(g)
    assert res.applied == 1 and [op.type for op in g1.ops] == ["NEG"]
    same_outputs(g, g1)
