"""A depthwise conv fused with the 1x1 conv that reads it (depthwise_conv1x1), vs LiteRT.

The fusion runs on the adapter classes of tile_tables.FUSED_TILES (none yet: measured slower
on lavapipe, SwiftShader and an H100); these tests give this machine's class a row, so
the kernel runs here. Blocks as the models have
them: BlazeBlock (dw 3x3 or 5x5 -> 1x1 + residual ADD -> RELU), a strided one with its
pooled, channel-padded shortcut, face_landmark's PReLU, MobileNet's RELU6 between the
two convs, and layers whose tile must shrink (many channels: work group memory) or
whose 1x1 weights exceed a uniform binding (storage weights).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.gpu.kernels import tile_tables
from engine.gpu.kernels.depthwise import TILES
from engine.gpu.kernels.depthwise_conv1x1 import tile_shape
from engine.precision import precision as precision_of
from tests.helpers.gpu import STORAGES, conv_attrs, gpu_context, texture_wrapped
from tests.helpers.single_op import max_error, run_litert
from tests.helpers.transforms import Builder

ctx = gpu_context()
CLASS = tile_tables.adapter_class(ctx.info)
RNG = np.random.default_rng(31)


@pytest.fixture
def fused_here(monkeypatch):
    """This adapter's class fuses (as the gpu class does), with the default tile."""
    monkeypatch.setitem(tile_tables.FUSED_TILES, CLASS, tile_tables.FusedTile())


def block(h, w, c, cout, k=3, stride=1, dw_act="NONE", tail="add", batch=1, between=None,
          pad=False):  # fmt: skip
    """x -> DEPTHWISE k x k / stride (dw_act) -> CONV_2D 1x1 to cout, then `tail`:
    "add" (+ x, RELU; same shape only), "pool" (+ PAD(MAX_POOL 2x2/2 (x)), RELU),
    "prelu", or "none". `between`: an activation op between the two convs (fused into
    the depthwise); `pad`: a zero PAD before a VALID depthwise (merged into it as its
    explicit padding). Both convs have biases (LiteRT's reference kernels need them)."""
    b = Builder()
    tensor, op = b.tensor, b.op

    def normal(*shape, scale=1.0):
        return (RNG.standard_normal(shape) * scale).astype(np.float32)

    oh, ow = -(-h // stride), -(-w // stride)
    x = tensor((batch, h, w, c), name="x")
    dw_in, padding = x, "SAME"
    if pad:  # SAME's padding of a k x k stride-1 conv, as a PAD op
        before, after = (k - 1) // 2, k // 2
        amounts = np.array([[0, 0], [before, after], [before, after], [0, 0]], np.int32)
        dw_in = op("PAD", (x, tensor((4, 2), amounts)), (batch, h + k - 1, w + k - 1, c))
        padding = "VALID"
    dw_b = tensor((c,), normal(c))
    d = op("DEPTHWISE_CONV_2D", (dw_in, tensor((1, k, k, c), normal(1, k, k, c)), dw_b),
           (batch, oh, ow, c),
           **conv_attrs(padding, stride=stride, act=dw_act, depth_multiplier=1))  # fmt: skip
    if between:
        d = op(between, (d,), (batch, oh, ow, c))
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
    return b.graph([x], [y], "dw-1x1")


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
    # a sigmoid between, 7 -> 6 channels: the output's sigmoid mask (2 lanes of its last
    # slice) must not reach the depthwise's last slice (3 real lanes)
    "logistic between, 7 -> 6": dict(h=9, w=8, c=7, cout=6, tail="none", between="LOGISTIC"),
    "pad merged into the depthwise": dict(h=10, w=9, c=8, cout=8, pad=True),
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
    dw_block = tile_tables.depthwise_tile(CLASS, 3, 1) or TILES[(3, 1)]
    th, tw, by, bx = tile_shape(6, 5, 1, 80, dw_block, tile_tables.FusedTile())
    assert th * tw <= 8 and th % by == 0 and tw % bx == 0
    assert f"const TH: u32 = {th}u;" in source and f"const TW: u32 = {tw}u;" in source
    assert f"var<workgroup> mid: array<vec4<A>, {th * tw * 80}>;" in source  # <= 16 KiB


def test_classes_without_a_row_run_the_pair(monkeypatch):
    """A class without a row keeps the two kernels (tile_tables.FUSED_TILES)."""
    monkeypatch.delitem(tile_tables.FUSED_TILES, CLASS, raising=False)
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
    from tests.helpers.files import model_file

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


@pytest.mark.parametrize(
    "fields", [dict(pixels=48), dict(bp=3), dict(wg=6), dict(wg=24), dict(bs=0)]
)
def test_a_tile_the_kernel_cannot_split_is_refused(fields):
    with pytest.raises(ValueError):
        tile_tables.FusedTile(**fields)


def test_tile_shapes_fit_memory_and_whole_blocks():
    """Every shape the models' layers could ask for: powers of two, whole depthwise blocks,
    within work group memory and the tile's pixel cap."""
    t = tile_tables.FusedTile()
    for h, w, slices in [(64, 64, 6), (16, 16, 22), (3, 3, 32), (1, 7, 256), (96, 96, 4)]:
        for block in [(4, 4), (4, 2), (2, 2), (1, 1)]:
            th, tw, by, bx = tile_shape(h, w, 1, slices, block, t)
            assert th % by == 0 and tw % bx == 0 and by <= block[0] and bx <= block[1]
            assert th * tw <= t.pixels and th * tw * slices * 16 <= 16384
            assert (th * tw) & (th * tw - 1) == 0
