"""The compact kernel set (compile.KERNEL_SETS): each op's kernel at its smallest work
shape (transposed convs: one stride period), conv2d's taps in loops, no conv_first /
depthwise_tiled. Checked against the
reference interpreter (itself checked against LiteRT on these models and ops,
tests/reference), per op and on the app's models, and for what makes the set worth
having: far less shader code than the optimized set (what SwiftShader and lavapipe
spend their compile time on, docs/architecture.md, "Kernel sets")."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from engine.gpu.compile import CompileOptions, Target, compile_graph
from engine.gpu.engine import Engine
from engine.model.importer import load_tflite
from engine.reference import Interpreter
from tests.helpers.conv_cases import (
    CONV_CASES,
    DEPTHWISE_CASES,
    TCONV_GRID,
    depthwise_graph,
    tconv_graph,
)
from tests.helpers.files import CORE_MODELS, model_file
from tests.helpers.gpu import STORAGES, add_rich_epilogue, assert_matches, conv_attrs, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()

NOT_COMPACT = {"conv_first", "depthwise_tiled"}


def _conv_graph(case, rng):
    h, w, cin, cout, k, stride, dil, padding, act = case
    weights = rng.standard_normal((cout, k, k, cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    attrs = conv_attrs(padding, stride, dil, act)
    return single_op_graph("CONV_2D", [(1, h, w, cin), weights, bias], attrs)


def code_lines(program) -> int:
    """Non-blank, non-comment WGSL lines of a program's distinct shaders."""
    sources = {d.source for d in program.dispatches}
    return sum(
        1 for s in sources for line in s.splitlines()
        if line.strip() and not line.strip().startswith("//")
    )  # fmt: skip


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", CONV_CASES, ids=[str(c) for c in CONV_CASES])
def test_compact_conv(case, storage):
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    graph = _conv_graph(case, rng)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage, kernels="compact")
    kernels = {d.kernel for d in engine.program.dispatches}
    assert not kernels & NOT_COMPACT, kernels
    if "conv2d" in kernels:  # the taps are loops, not unrolled
        (src,) = {d.source for d in engine.program.dispatches if d.kernel == "conv2d"}
        assert "for (var ky = 0;" in src and "for (var kx = 0;" in src


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", DEPTHWISE_CASES, ids=[str(c) for c in DEPTHWISE_CASES])
def test_compact_depthwise(case, storage):
    """Every kernel size, stride, dilation and multiplier, all read from the uniform G."""
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    graph = depthwise_graph(*case, rng)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage, kernels="compact")
    assert "depthwise" in {d.kernel for d in engine.program.dispatches}
    assert not {d.kernel for d in engine.program.dispatches} & NOT_COMPACT


@pytest.mark.parametrize("storage", STORAGES)
def test_compact_conv1x1_gate_and_epilogue(storage):
    """The shared 1x1 kernel with a squeeze-excite gate, a residual add, PReLU slopes and a
    sigmoid (padded lanes stay 0), operands read through G's texture tiles."""
    rng = np.random.default_rng(9)
    weights = rng.standard_normal((6, 1, 1, 8)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    graph = single_op_graph("CONV_2D", [(1, 6, 7, 8), weights, bias], conv_attrs())
    add_rich_epilogue(graph, rng, gate=True)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage, kernels="compact")
    assert "conv1x1" in {d.kernel for d in engine.program.dispatches}


def _one_op_source(graph) -> str:
    program = compile_graph(graph, CompileOptions(kernels="compact"), Target(adapter="llvmpipe"))
    (source,) = {d.source for d in program.dispatches}
    return source


def test_compact_layers_of_any_shape_share_one_shader():
    """GPU-free: what makes the compact set start fast on lavapipe, where each distinct
    shader costs 50-90 ms of LLVM at its first dispatch: shapes are uniforms, not code."""
    rng = np.random.default_rng(3)
    pointwise = {
        _one_op_source(single_op_graph(
            "CONV_2D",
            [(1, h, w, cin), rng.standard_normal((cout, 1, 1, cin)).astype(np.float32), None],
            conv_attrs(act="RELU"),
        ))
        for h, w, cin, cout in [(16, 16, 8, 16), (5, 3, 40, 12), (1, 1, 64, 64)]
    }  # fmt: skip
    depthwise = {
        _one_op_source(depthwise_graph(1, h, w, c, 1, k, stride, dil, pad, "RELU6", rng))
        for h, w, c, k, stride, dil, pad in [
            (9, 11, 5, 3, 1, 1, "SAME"), (12, 12, 32, 5, 2, 1, "VALID"), (11, 9, 6, 7, 3, 2, "SAME")
        ]
    }  # fmt: skip
    assert len(pointwise) == 1 and len(depthwise) == 1


@pytest.mark.parametrize("name", CORE_MODELS)
def test_compact_set_has_a_fraction_of_the_shaders(name):
    """GPU-free: on the app's models the compact set compiles at most 0.55x the optimized
    set's distinct shaders (measured: 12/36, 10/30, 28/54 on lavapipe's tables)."""
    graph = load_tflite(model_file(name))
    for adapter in ("llvmpipe", "swiftshader", "gpu"):
        opt = compile_graph(graph, CompileOptions(), Target(adapter=adapter))
        small = compile_graph(graph, CompileOptions(kernels="compact"), Target(adapter=adapter))
        shaders = [len({d.source for d in p.dispatches}) for p in (small, opt)]
        assert shaders[0] <= 0.55 * shaders[1], (adapter, shaders)


@pytest.mark.parametrize("padding,stride,k", TCONV_GRID)
def test_compact_transpose_conv(padding, stride, k):
    """One stride period per invocation (the optimized set unrolls up to 4 x 4 of them)."""
    rng = np.random.default_rng(zlib.crc32(repr((padding, stride, k)).encode()))
    graph = tconv_graph(padding, stride, k, rng, hw=(9, 7))
    engine = assert_matches(graph, random_feeds(graph, rng), kernels="compact")
    assert not engine.fallback_ops


def test_kernel_set_is_validated():
    with pytest.raises(ValueError, match="kernels must be one of"):
        CompileOptions(kernels="fast")


@pytest.mark.parametrize("name", CORE_MODELS)
def test_compact_set_has_a_fraction_of_the_code(name):
    """GPU-free: the same ops run, by kernels without unrolled blocks, in under half the
    WGSL (measured: 0.16-0.26x), on every adapter class's tile tables."""
    graph = load_tflite(model_file(name))
    for adapter in ("llvmpipe", "swiftshader", "gpu"):
        opt = compile_graph(graph, CompileOptions(), Target(adapter=adapter))
        small = compile_graph(graph, CompileOptions(kernels="compact"), Target(adapter=adapter))
        assert [s.op_index for s in small.steps] == [s.op_index for s in opt.steps]
        assert not {d.kernel for d in small.dispatches} & NOT_COMPACT
        assert code_lines(small) < 0.5 * code_lines(opt), (adapter, code_lines(small))


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("name", CORE_MODELS)
def test_compact_model_matches_reference(name, storage, astronaut_rgb):
    import cv2

    graph = load_tflite(model_file(name))
    engine = Engine(graph, kernels="compact", storage=storage)
    assert engine.kernels == "compact" and engine.fallback_ops == []
    reference = Interpreter(graph)
    (t,) = graph.inputs
    _, h, w, _ = graph.tensors[t].shape
    photo = cv2.resize(astronaut_rgb, (w, h), interpolation=cv2.INTER_AREA) / 255.0
    rng = np.random.default_rng(0)
    for x in (rng.uniform(-1, 1, (1, h, w, 3)), photo[None]):
        feeds = {graph.tensors[t].name: x.astype(np.float32)}
        engine.poison()
        got, want = engine.run(feeds), reference.run(feeds)
        for out, ref in want.items():
            scale = max(1.0, float(np.abs(ref).max()))
            err = float(np.abs(got[out] - ref).max())
            assert err <= 1e-4 * scale, f"{out}: max|diff| {err:.3g}"
