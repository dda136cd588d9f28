"""Static features against hand-computed values; the GPU-free dispatch list against the
engine's own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.gpu.kernels.base import shape4
from engine.latency import space
from engine.latency.builder import NetConfig, build_graph
from engine.latency.cell import INPUT, OUTPUT, Cell
from engine.latency.dispatches import AdapterProfile, compiled, dispatch_list
from engine.latency.features import flops, params, peak_memory, static_features
from tests.helpers.latency import PROFILE

TWO = Cell.make([[0, 1], [0, 0]], [INPUT, OUTPUT])  # the cell is a 1x1 projection
SMALL = NetConfig(input_size=8, input_channels=3, stem_channels=4, num_stacks=1, num_classes=2)


def test_two_vertex_cell_by_hand():
    g = build_graph(TWO, SMALL)
    # stem 3x3x3 -> 4 on 8x8: 2 * 256 outputs * 27 taps; projection 4 -> 4: 2 * 256 * 4;
    # MEAN reads 256 values; dense 4 -> 2: 2 * 2 * 4
    assert flops(g) == 2 * 256 * 27 + 2 * 256 * 4 + 256 + 2 * 2 * 4 == 16144
    # stem 4*27 + 4, projection 16 + 4, dense 8 + 2 (MEAN's axes are int32, not counted)
    assert params(g) == 112 + 20 + 10
    # intermediates (RELU fused): stem 8x8x4 and projection 8x8x4, 1 PHWC4 slice of
    # 16-byte texels = 1024 B each, alive together at the projection; the mean's 16 B
    # reuses the stem's place: 2048 B
    assert peak_memory(g, "fp32", alignment=32) == 2048
    assert peak_memory(g, "fp16", alignment=32) == 1024


def test_two_vertex_dispatches():
    f = static_features(build_graph(TWO, SMALL), PROFILE)
    kinds = [d.kernel for d in f["dispatch_list"]]
    # both convs have C_in <= 4: the first-layer kernel takes them (conv_first.py)
    kinds_first = ["hwc_to_phwc4", "conv_first", "conv_first", "mean", "fully_connected"]
    assert kinds == [*kinds_first, "phwc4_to_hwc"]
    stem = f["dispatch_list"][1]
    assert stem.flops == 2 * 256 * 27
    # conv_first (C_in = 3) bakes its weights and bias into the WGSL as literals: it reads
    # only the 8x8x3 input (one slice: 1024 B) and writes 8x8x4 (1024 B)
    assert (stem.bytes_read, stem.bytes_written, stem.const_bytes) == (1024, 1024, 0)
    proj = f["dispatch_list"][2]  # the 1x1 projection 4 -> 4, weights as literals too
    assert (proj.bytes_read, proj.bytes_written, proj.const_bytes) == (1024, 1024, 0)
    assert f["dispatches"] == 6


def shader_workgroup_size(source: str) -> tuple[int, int, int]:
    """The @workgroup_size of a WGSL compute shader (missing dimensions are 1)."""
    m = re.search(r"@workgroup_size\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?(?:,\s*(\d+)\s*)?\)", source)
    return tuple(int(x) if x else 1 for x in m.groups())


def test_dispatch_lists_render_no_shader_and_match_the_rendered_ones(monkeypatch):
    """The work group sizes the features read are those the shaders declare, and
    computing them renders nothing (jinja2 was most of a prediction's time)."""
    from engine.gpu.io import conversion
    from engine.gpu.kernels import base

    def no_render(*args, **kwargs):
        raise AssertionError("dispatch_list rendered a shader")

    for cell in [TWO, *space.sample_cells(4, seed=5)]:
        g = build_graph(cell)
        for precision in ("fp32", "fp16"):
            with monkeypatch.context() as m:
                m.setattr(base, "render", no_render)
                rows = dispatch_list(g, PROFILE, precision)
            program = compiled(g, PROFILE, precision)
            io = [conversion("hwc_to_phwc4.wgsl", shape4(program.graph, t), precision)
                  for t in program.graph.inputs]  # fmt: skip
            io_out = [conversion("phwc4_to_hwc.wgsl", shape4(program.graph, t), precision)
                      for t in program.graph.outputs]  # fmt: skip
            shaders = [*io, *program.dispatches, *io_out]
            assert [r.workgroup for r in rows] == [shader_workgroup_size(d.source) for d in shaders]
            assert [r.groups for r in rows] == [tuple(d.workgroups) for d in shaders]


@pytest.mark.gpu
def test_engine_records_the_predicted_dispatches():
    from tests.helpers.gpu import gpu_context

    ctx = gpu_context()
    from engine.gpu.engine import Engine

    profile = AdapterProfile.from_context(ctx, precisions=("fp32",))
    for cell in space.sample_cells(3, seed=9):
        g = build_graph(cell)
        engine = Engine(g, context=ctx)
        recorded = [
            (d.kernel, tuple(d.grid)) for s in engine.resources.segments for d in s.dispatches
        ]
        predicted = [(d.kernel, d.groups) for d in dispatch_list(g, profile) if d.op_type != "io"]
        assert recorded == predicted


def test_profile_round_trips():
    assert AdapterProfile.from_dict(json.loads(json.dumps(PROFILE.to_dict()))) == PROFILE


@pytest.mark.parametrize("name", ["face_detection_short_range", "face_landmark"])
def test_models_dispatch_lists(name):
    from engine.catalog.paths import models_dir

    path = Path(models_dir()) / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} not fetched")
    from engine.model.importer import load_tflite

    rows = dispatch_list(load_tflite(path), PROFILE)
    assert rows[0].op_type == "io" and rows[-1].op_type == "io"
    assert all(d.group_count >= 1 and min(d.workgroup) >= 1 for d in rows)
