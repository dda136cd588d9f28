"""A 2x2 max-pool shortcut folded into the 1x1 conv's epilogue (add_pool2), vs LiteRT.

The downsampling block of BlazeFace and face_landmark: depthwise stride 2 -> 1x1 conv,
plus MAX_POOL_2D 2x2/2 of the block input (channel-padded with zeros when the conv
widens) -> ADD -> activation. After transforms the pool is gone and the conv's
epilogue reads the 2x2 window itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.model.ir import Graph, Op, Tensor
from engine.precision import precision as precision_of
from engine.transforms import run_all
from tests.helpers.gpu import STORAGES, gpu_context, texture_wrapped
from tests.helpers.single_op import max_error, run_litert

ctx = gpu_context()
RNG = np.random.default_rng(12)


def block(h: int, w: int, c: int, cout: int, pool_readers: int = 1) -> Graph:
    """x (1,h,w,c) -> dw 3x3/2 -> 1x1 conv to cout; + PAD(MAX_POOL(x)) -> ADD(RELU).
    `pool_readers` 2: the pool output is a graph output too (the fold must decline)."""
    tensors: list[Tensor] = []
    ops: list[Op] = []

    def tensor(shape, data=None, name=None):
        dtype = "float32" if data is None else data.dtype.name
        tensors.append(Tensor(name or f"t{len(tensors)}", tuple(shape), dtype, data))
        return len(tensors) - 1

    def op(kind, inputs, shape, **attrs):
        out = tensor(shape)
        ops.append(Op(kind, tuple(inputs), (out,), attrs))
        return out

    conv = {"stride_w": 1, "stride_h": 1, "dilation_w_factor": 1, "dilation_h_factor": 1,
            "fused_activation_function": "NONE"}  # fmt: skip
    oh, ow = (h + 1) // 2, (w + 1) // 2
    x = tensor((1, h, w, c), name="x")
    dw_w = tensor((1, 3, 3, c), RNG.standard_normal((1, 3, 3, c)).astype(np.float32))
    dw_b = tensor((c,), RNG.standard_normal(c).astype(np.float32))
    d = op("DEPTHWISE_CONV_2D", (x, dw_w, dw_b), (1, oh, ow, c),
           **{**conv, "padding": "SAME", "stride_w": 2, "stride_h": 2, "depth_multiplier": 1})  # fmt: skip
    pw_w = tensor((cout, 1, 1, c), RNG.standard_normal((cout, 1, 1, c)).astype(np.float32))
    pw_b = tensor((cout,), RNG.standard_normal(cout).astype(np.float32))
    y = op("CONV_2D", (d, pw_w, pw_b), (1, oh, ow, cout), **{**conv, "padding": "VALID"})
    # SAME: an odd size's last window is partial (max over what is in bounds)
    pool = op("MAX_POOL_2D", (x,), (1, oh, ow, c), padding="SAME", stride_h=2,
              stride_w=2, filter_height=2, filter_width=2, fused_activation_function="NONE")  # fmt: skip
    residual = pool
    if cout > c:
        pads = tensor((4, 2), np.array([[0, 0], [0, 0], [0, 0], [0, cout - c]], np.int32))
        residual = op("PAD", (pool, pads), (1, oh, ow, cout))
    out = op("ADD", (y, residual), (1, oh, ow, cout), fused_activation_function="RELU")
    outputs = [out, pool] if pool_readers == 2 else [out]
    return Graph(tensors, ops, [x], outputs, "pooled-residual")


def litert_vs_engine(
    graph: Graph, precision: str, storage: str, kernels: str = "optimized"
) -> tuple[float, Engine]:
    feeds = {"x": RNG.uniform(-2, 2, graph.tensors[graph.inputs[0]].shape).astype(np.float32)}
    want = run_litert(graph, feeds)
    engine = Engine(texture_wrapped(graph) if storage == "texture" else graph,
                    precision=precision, storage=storage, kernels=kernels)  # fmt: skip
    got = engine.run(feeds)
    return max(max_error(want[k], got[k]) for k in want), engine


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("shape", [(16, 16, 8, 16), (12, 10, 16, 16), (24, 24, 5, 12)])
def test_pool_folded_into_the_conv_matches_litert(shape, precision, storage):
    if precision == "fp16" and not ctx.has_f16:
        pytest.skip(f"{ctx.name}: no shader-f16")
    graph = block(*shape)
    transformed = run_all(graph)
    assert "MAX_POOL_2D" not in [op.type for op in transformed.ops]
    steps = [s for op in transformed.ops for s in op.attrs.get("epilogue", ())]
    assert [s[0] for s in steps] == ["add_pool2", "act"]
    err, engine = litert_vs_engine(graph, precision, storage)
    assert err <= precision_of(precision).tolerance, err
    assert "pool2d" not in [d.kernel for d in engine.program.dispatches]
    if storage == "texture":
        assert engine.placement.textures  # the block input was read from a texture


@pytest.mark.parametrize(
    "shape, readers",
    [((15, 14, 8, 16), 1), ((16, 16, 8, 16), 2)],  # odd input height; pool read twice
    ids=["odd-size", "pool-is-an-output"],
)
def test_fold_declined_keeps_the_pool(shape, readers):
    graph = block(*shape, pool_readers=readers)
    assert "MAX_POOL_2D" in [op.type for op in run_all(graph).ops]
    err, engine = litert_vs_engine(graph, "fp32", "buffer")
    assert err <= precision_of("fp32").tolerance, err
    assert "pool2d" in [d.kernel for d in engine.program.dispatches]


@pytest.mark.parametrize("storage", STORAGES)
def test_compact_set_reads_the_pool_window_and_channel_bound_from_its_uniform(storage):
    """The compact set's shared 1x1 kernel (engine/gpu/kernels/params.py): the folded
    pool's operand size and the channel-padded add's slice bound are fields of G."""
    graph = block(16, 12, 5, 12)  # 5 -> 12 channels: the pooled operand has a slice bound
    err, engine = litert_vs_engine(graph, "fp32", storage, kernels="compact")
    assert err <= precision_of("fp32").tolerance, err
    (src,) = {d.source for d in engine.program.dispatches if d.kernel == "conv1x1"}
    assert "G.ep0_guard" in src
    assert ("G.ep0_rows" if storage == "buffer" else "G.ep0_across") in src  # a texture: tiles
