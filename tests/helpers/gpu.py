"""GPU test helpers: skip without an adapter, compare the engine with the reference.

Storage kinds: graph inputs and outputs are always buffers, so a single-op graph
would never touch a texture. With storage="texture" the engine runs
`texture_wrapped(graph)`: every graph input first goes through MAXIMUM(x, x) and
every graph output comes out of one, so the op under test reads and writes
intermediates, which placement puts in textures (asserted).
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from engine.model.ir import Graph, Op, Tensor
from engine.precision import precision as precision_of
from engine.reference import Interpreter
from tests.helpers import tiers
from tests.helpers.ci import missing

STORAGES = ("buffer", "texture")


def gpu_context():
    """The shared context. Called at a module's top level it puts the module in the `gpu`
    tier (tests/helpers/tiers.py). No adapter: the module skips locally, fails in CI."""
    from engine.errors import DeviceError
    from engine.gpu.device import shared_context

    caller = sys._getframe(1)
    if caller.f_code.co_name == "<module>":  # at import: the whole module needs an adapter
        tiers.record(caller.f_globals.get("__name__", ""), "gpu")
    try:
        return shared_context()
    except DeviceError as exc:
        missing(f"no WebGPU adapter: {exc}")


def gl_context():
    """The shared context on wgpu's OpenGL (GLES) backend (Mesa's llvmpipe through EGL in
    CI). Called at a module's top level it puts the module in the `gl` tier. No OpenGL
    adapter: the module skips locally, fails in CI."""
    from engine.errors import DeviceError
    from engine.gpu.device import shared_context

    caller = sys._getframe(1)
    if caller.f_code.co_name == "<module>":
        tiers.record(caller.f_globals.get("__name__", ""), "gl")
    try:
        ctx = shared_context("OpenGL")
    except DeviceError as exc:
        missing(f"no OpenGL adapter (EGL: Mesa's libegl-mesa0): {exc}")
    assert ctx.info.get("backend_type") == "OpenGL", ctx.info
    return ctx


def conv_attrs(padding="SAME", stride=1, dilation=1, act="NONE", **extra) -> dict:
    """CONV_2D / DEPTHWISE_CONV_2D attributes, the same stride and dilation in h and w;
    `extra`: more attributes (depth_multiplier, ...)."""
    return {
        "padding": padding,
        "stride_w": stride,
        "stride_h": stride,
        "dilation_w_factor": dilation,
        "dilation_h_factor": dilation,
        "fused_activation_function": act,
        **extra,
    }


def add_input(graph: Graph, name: str, shape: tuple[int, ...]) -> int:
    """Append a float32 graph input (e.g. a residual for an epilogue add); its tensor id."""
    graph.tensors.append(Tensor(name, shape, "float32"))
    graph.inputs.append(len(graph.tensors) - 1)
    return len(graph.tensors) - 1


def add_rich_epilogue(graph: Graph, rng: np.random.Generator, gate: bool = False) -> None:
    """The first op (a conv) followed by what the transforms fuse into its epilogue: a
    residual add, per-channel PReLU and a sigmoid (padded lanes must stay 0); `gate`: and
    a squeeze-excite input scale (engine/reference/fused.py scales the input first)."""
    conv = graph.ops[0]
    out = graph.tensors[conv.outputs[0]].shape
    res = add_input(graph, "residual", out)
    if gate:
        cin = graph.tensors[conv.inputs[0]].shape[-1]
        conv.attrs["input_scale"] = add_input(graph, "scale", (1, 1, 1, cin))
    slopes = rng.standard_normal(out[-1]).astype(np.float32)
    graph.tensors.append(Tensor("slopes", (1, 1, out[-1]), "float32", slopes.reshape(1, 1, -1)))
    conv.attrs["epilogue"] = (("add", res), ("prelu", len(graph.tensors) - 1), ("act", "LOGISTIC"))


def texture_wrapped(graph: Graph) -> Graph:
    """`graph` with an identity MAXIMUM(x, x) after each input and before each output
    (same names outside; the old I/O tensors become intermediates, same ids)."""
    tensors, ops, inputs, outputs = list(graph.tensors), [], [], []
    for t in graph.inputs:
        tensors.append(tensors[t])
        tensors[t] = replace(tensors[t], name=f"{tensors[t].name}:inner")
        inputs.append(len(tensors) - 1)
        ops.append(Op("MAXIMUM", (inputs[-1], inputs[-1]), (t,), {}))
    ops.extend(graph.ops)
    for t in graph.outputs:
        tensors.append(tensors[t])
        tensors[t] = replace(tensors[t], name=f"{tensors[t].name}:inner")
        outputs.append(len(tensors) - 1)
        ops.append(Op("MAXIMUM", (t, t), (outputs[-1],), {}))
    return Graph(tensors, ops, inputs, outputs, name=f"{graph.name}+texture")


def run_both(
    graph: Graph,
    feeds: dict,
    precision: str = "fp32",
    transforms: bool = False,
    storage: str = "buffer",
    kernels: str = "optimized",
):
    """(engine outputs, reference outputs) by name; engine tensors poisoned with NaN first."""
    from engine.gpu.engine import Engine

    run_graph = texture_wrapped(graph) if storage == "texture" else graph
    engine = Engine(run_graph, precision=precision, transforms=transforms, storage=storage,
                    kernels=kernels)  # fmt: skip
    if storage == "texture":
        assert_wrapped_in_textures(engine, graph)
    engine.poison()
    got = engine.run(feeds)
    want = Interpreter(graph).run(feeds)
    return got, want, engine


def assert_wrapped_in_textures(engine, graph: Graph) -> None:
    """The op under test's inputs and outputs are textures, unless over the limits."""
    for t in [*graph.inputs, *graph.outputs]:
        if t in engine.placement.textures:
            continue
        why = engine.placement.reasons.get(t, "?")
        assert "limits" in why, f"{graph.tensors[t].name} is a buffer: {why}"


def assert_matches(
    graph: Graph,
    feeds: dict,
    precision: str = "fp32",
    transforms: bool = False,
    storage: str = "buffer",
    kernels: str = "optimized",
):
    """max|diff| <= the precision's tolerance * max(1, max|ref|) (engine/precision.py)."""
    got, want, engine = run_both(graph, feeds, precision, transforms, storage, kernels)
    for name, ref in want.items():
        out = got[name]
        assert out.shape == ref.shape, name
        scale = max(1.0, float(np.abs(ref).max()))
        tol = precision_of(precision).tolerance
        err = float(np.abs(out.astype(np.float64) - ref).max()) if ref.size else 0.0
        assert np.isfinite(out).all(), f"{name}: non-finite values (unwritten elements?)"
        assert err <= tol * scale, f"{name}: max|diff| {err:.3g} > {tol * scale:.3g}"
    if precision == "fp32" or storage == "texture":
        assert_padded_lanes_zero(engine)
    return engine


def assert_padded_lanes_zero(engine) -> None:
    """Every graph output and every texture tensor holds exactly 0 in its padded lanes
    (c >= C): later kernels read whole vec4s (e.g. a channel PAD copies them)."""
    from engine.gpu.kernels.base import shape4

    g = engine.graph
    for t in [*g.outputs, *sorted(engine.placement.textures)]:
        s4 = shape4(g, t)
        last = engine.read_phwc4(t)[-1].reshape(-1, 4)
        assert (last[:, (s4.c - 1) % 4 + 1 :] == 0).all(), f"{g.tensors[t].name}: padded lanes"


def check_single_submit(graph, feeds, precision="fp32", storage="buffer"):
    """assert_matches, no CPU fallback, one submit, zero padded lanes (fp32)."""
    engine = assert_matches(graph, feeds, precision, storage=storage)
    assert engine.fallback_ops == [] and engine.stats.submits == 1
    if precision == "fp32":
        assert_padded_lanes_zero(engine)
    return engine
