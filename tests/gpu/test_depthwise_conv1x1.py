"""A depthwise conv fused with the 1x1 conv that reads it (depthwise_conv1x1), vs LiteRT.

The fusion runs on the adapter classes of tiles.FUSED_TILES (none yet: measured slower
on lavapipe, SwiftShader and an H100); these tests give this machine's class a row, so
the kernel runs here. Blocks as the models have
them: BlazeBlock (dw 3x3 or 5x5 -> 1x1 + residual ADD -> RELU), a strided one with its
pooled, channel-padded shortcut, face_landmark's PReLU, MobileNet's RELU6 between the
two convs, and layers whose tile must shrink (many channels: work group memory) or
whose 1x1 weights exceed a uniform binding (storage weights).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.gpu.kernels import tiles
from engine.gpu.kernels.depthwise_conv1x1 import tile_shape
from engine.model.ir import Graph, Op, Tensor
from engine.precision import precision as precision_of
from tests.gpu.util import STORAGES, conv_attrs, gpu_context, texture_wrapped
from tests.reference.single_op import max_error, run_litert

ctx = gpu_context()
CLASS = tiles.adapter_class(ctx.info)
RNG = np.random.default_rng(31)


@pytest.fixture
def fused_here(monkeypatch):
    """This adapter's class fuses (as the gpu class does), with the default tile."""
    monkeypatch.setitem(tiles.FUSED_TILES, CLASS, tiles.FusedTile())


def block(h, w, c, cout, k=3, stride=1, dw_act="NONE", tail="add", batch=1):
    """x -> DEPTHWISE k x k / stride (dw_act) -> CONV_2D 1x1 to cout, then `tail`:
    "add" (+ x, RELU; same shape only), "pool" (+ PAD(MAX_POOL 2x2/2 (x)), RELU),
    "prelu", or "none". Both convs have biases (LiteRT's reference kernels need them)."""
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

    def normal(*shape, scale=1.0):
        return (RNG.standard_normal(shape) * scale).astype(np.float32)

    oh, ow = -(-h // stride), -(-w // stride)
    x = tensor((batch, h, w, c), name="x")
    dw_b = tensor((c,), normal(c))
    d = op("DEPTHWISE_CONV_2D", (x, tensor((1, k, k, c), normal(1, k, k, c)), dw_b),
           (batch, oh, ow, c), **conv_attrs(stride=stride, act=dw_act, depth_multiplier=1))  # fmt: skip
    pw_b = tensor((cout,), normal(cout))
    y = op("CONV_2D", (d, tensor((cout, 1, 1, c), normal(cout, 1, 1, c, scale=c**-0.5)), pw_b),
           (batch, oh, ow, cout), **conv_attrs(padding="VALID"))  # fmt: skip
    if tail == "add":
        y = op("ADD", (y, x), (batch, oh, ow, cout), fused_activation_function="RELU")
    elif tail == "pool":
        pool = op("MAX_POOL_2D", (x,), (batch, oh, ow, c), padding="VALID", stride_h=2,
                  stride_w=2, filter_height=2, filter_width=2, fused_activation_function="NONE")  # fmt: skip
        pads = tensor((4, 2), np.array([[0, 0], [0, 0], [0, 0], [0, cout - c]], np.int32))
        padded = op("PAD", (pool, pads), (batch, oh, ow, cout))
        y = op("ADD", (y, padded), (batch, oh, ow, cout), fused_activation_function="RELU")
    elif tail == "prelu":
        slopes = tensor((1, 1, cout), normal(1, 1, cout, scale=0.2))
        y = op("PRELU", (y, slopes), (batch, oh, ow, cout))
    return Graph(tensors, ops, [x], [y], "dw-1x1")


def check(graph, precision="fp32", storage="buffer"):
    """The engine's outputs vs LiteRT's reference kernels; the engine, for more checks."""
    feeds = {"x": RNG.uniform(-2, 2, graph.tensors[graph.inputs[0]].shape).astype(np.float32)}
    want = run_litert(graph, feeds)
    engine = Engine(texture_wrapped(graph) if storage == "texture" else graph,
                    precision=precision, storage=storage)  # fmt: skip
    engine.poison()  # an unwritten output element stays NaN
    got = engine.run(feeds)
    for name, ref in want.items():
        err = max_error(ref, got[name])
        assert err <= precision_of(precision).tolerance, f"{name}: {err:.3g}"
    kernels = [d.kernel for d in engine.program.dispatches]
    assert "depthwise_conv1x1" in kernels, kernels
    assert not {"depthwise_tiled", "depthwise", "conv1x1", "gemm1x1"} & set(kernels), kernels
    return engine


BLOCKS = {
    "blazeblock 3x3": dict(h=16, w=16, c=24, cout=24),
    "blazeblock 5x5 wider": dict(h=12, w=10, c=24, cout=24, k=5),
    "strided, pooled shortcut": dict(h=16, w=12, c=12, cout=20, stride=2, tail="pool"),
    "odd size, prelu": dict(h=9, w=7, c=16, cout=16, tail="prelu"),
    "relu6 between": dict(h=10, w=10, c=6, cout=9, dw_act="RELU6", tail="none"),
    "batch 2": dict(h=8, w=8, c=8, cout=8, batch=2),
}


@pytest.mark.usefixtures("fused_here")
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", list(BLOCKS))
def test_fused_block_matches_litert(name, precision, storage):
    if precision == "fp16" and not ctx.has_f16:
        pytest.skip(f"{ctx.name}: no shader-f16")
    engine = check(block(**BLOCKS[name]), precision, storage)
    if storage == "texture":
        assert engine.placement.textures


@pytest.mark.usefixtures("fused_here")
def test_many_channels_shrink_the_tile_and_storage_weights():
    """320 channels: one pixel's depthwise result is 1,280 bytes, so a tile holds at most
    8 pixels (16 KiB); the 1x1 weights (80 x 80 mat4x4, 400 KB) go to a storage buffer
    where a uniform binding is smaller (WebGPU's minimum is 64 KiB)."""
    engine = check(block(6, 5, 320, 320, tail="none"))
    (source,) = [d.source for d in engine.program.dispatches if d.kernel == "depthwise_conv1x1"]
    if engine.target.max_uniform_bytes < 80 * 80 * 64:
        assert "var<storage, read> weights" in source
    th, tw, by, bx = tile_shape(6, 5, 1, 80, (4, 2), tiles.FusedTile())
    assert th * tw == 8 and th % by == 0 and tw % bx == 0
    (vec4s,) = re.findall(r"var<workgroup> mid: array<vec4<A>, (\d+)>", source)
    assert int(vec4s) % 80 == 0 and int(vec4s) * 16 <= 16384  # whole pixels, <= 16 KiB


def test_classes_without_a_row_run_the_pair(monkeypatch):
    """A class without a row keeps the two kernels (tiles.FUSED_TILES)."""
    monkeypatch.delitem(tiles.FUSED_TILES, CLASS, raising=False)
    engine = Engine(block(16, 16, 24, 24))
    kernels = [d.kernel for d in engine.program.dispatches]
    assert "depthwise_conv1x1" not in kernels and len(kernels) >= 2


@pytest.mark.usefixtures("fused_here")
def test_compact_set_does_not_fuse():
    engine = Engine(block(16, 16, 24, 24), kernels="compact")
    assert "depthwise_conv1x1" not in [d.kernel for d in engine.program.dispatches]


@pytest.mark.slow
@pytest.mark.usefixtures("fused_here")
@pytest.mark.parametrize("model", ["face_detection_short_range", "face_landmark"])
def test_fused_models_match_litert(model):
    """Whole models with every pair fused (16 and 20 pairs): outputs vs LiteRT."""
    from engine.model.importer import load_tflite
    from tests.conftest import model_file

    path = model_file(model)
    graph = load_tflite(path)
    feeds = {graph.tensors[graph.inputs[0]].name:
             RNG.uniform(-1, 1, graph.tensors[graph.inputs[0]].shape).astype(np.float32)}  # fmt: skip
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], next(iter(feeds.values())))
    it.invoke()
    engine = Engine(graph)
    got = engine.run(feeds)
    fused = [d for d in engine.program.dispatches if d.kernel == "depthwise_conv1x1"]
    assert len(fused) == {"face_detection_short_range": 16, "face_landmark": 20}[model]
    for d in it.get_output_details():
        assert max_error(it.get_tensor(d["index"]), got[d["name"]]) <= 1e-4, d["name"]
