"""GPU test helpers: skip without an adapter, compare the engine with the reference."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.ir import Graph
from engine.reference import Interpreter


def gpu_context():
    """The shared context, or skip the calling module when no adapter exists."""
    from engine.errors import DeviceError
    from engine.gpu.device import shared_context

    try:
        return shared_context()
    except DeviceError as exc:
        pytest.skip(f"no WebGPU adapter: {exc}", allow_module_level=True)


def run_both(graph: Graph, feeds: dict, precision: str = "fp32", transforms: bool = False):
    """(engine outputs, reference outputs) by name; engine buffers poisoned with NaN first."""
    from engine.gpu.engine import Engine

    engine = Engine(graph, precision=precision, transforms=transforms)
    engine.poison()
    got = engine.run(feeds)
    want = Interpreter(graph).run(feeds)
    return got, want, engine


def assert_matches(graph: Graph, feeds: dict, precision: str = "fp32", transforms: bool = False):
    """fp32: max|diff| <= 1e-5 * max(1, max|ref|); fp16: <= 2e-3 relative."""
    got, want, engine = run_both(graph, feeds, precision, transforms)
    for name, ref in want.items():
        out = got[name]
        assert out.shape == ref.shape, name
        scale = max(1.0, float(np.abs(ref).max()))
        tol = 1e-5 if precision == "fp32" else 2e-3
        err = float(np.abs(out.astype(np.float64) - ref).max()) if ref.size else 0.0
        assert np.isfinite(out).all(), f"{name}: non-finite values (unwritten elements?)"
        assert err <= tol * scale, f"{name}: max|diff| {err:.3g} > {tol * scale:.3g}"
    if precision == "fp32":
        assert_padded_lanes_zero(engine)
    return engine


def assert_padded_lanes_zero(engine) -> None:
    """Every graph output's PHWC4 buffer holds exactly 0 in its padded lanes (c >= C):
    later kernels read whole vec4s (e.g. a channel PAD copies them)."""
    from engine.gpu.kernels.base import shape4

    g = engine.graph
    for t in g.outputs:
        s4 = shape4(g, t)
        layout = engine.tensor_layout(g.tensors[t].name)
        raw = engine.ctx.device.queue.read_buffer(layout.buffer, layout.offset, layout.size)
        lanes = np.frombuffer(raw, np.float32, s4.vec4_count * 4).reshape(-1, 4)
        last = lanes[(s4.s - 1) * s4.rows * s4.w :]
        assert (last[:, (s4.c - 1) % 4 + 1 :] == 0).all(), f"{g.tensors[t].name}: padded lanes"
