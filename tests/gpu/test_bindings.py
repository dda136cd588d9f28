"""Bindings are stated once, in Python: a shader's declarations are generated from its
Binding tuple (engine/gpu/kernels/base.py render_shader) and its @workgroup_size from the
Dispatch's. GPU-free: kernels build and render without a device."""

from __future__ import annotations

import re

import pytest

from engine.gpu.compile import CompileOptions, Target, compile_graph
from engine.gpu.io import conversion
from engine.gpu.kernels import tile_tables
from engine.gpu.kernels.base import Binding, Shape4, render_shader
from engine.model.importer import load_tflite
from tests.helpers.files import CORE_MODELS, ROOT, model_file

DECLARATION = re.compile(r"@group\(0\) @binding\((\d+)\) var(<[^>]*>)? (\w+): ")
WORKGROUP_SIZE = re.compile(r"@workgroup_size\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?(?:,\s*(\d+)\s*)?\)")


def test_no_template_numbers_a_binding():
    templates = sorted((ROOT / "shaders").rglob("*.wgsl"))
    assert len(templates) > 40
    assert [p.name for p in templates if "@binding(" in p.read_text()] == []


def test_declarations():
    buffer = Binding("in", tensor=3, name="src", type="array<vec4<T>>")
    assert buffer.declaration(0) == "@group(0) @binding(0) var<storage, read> src: array<vec4<T>>;"
    assert buffer.declaration(2, arena=True) == (
        "@group(0) @binding(2) var<storage, read_write> src: array<vec4<T>>;"
    )
    out = Binding("out", tensor=4, name="dst", type="array<vec4<T>>")
    assert (
        out.declaration(1) == "@group(0) @binding(1) var<storage, read_write> dst: array<vec4<T>>;"
    )
    uniform = Binding("const", space="uniform", name="G", type="Params")
    assert uniform.declaration(4, arena=True) == "@group(0) @binding(4) var<uniform> G: Params;"
    texture = Binding("out", name="dst", type="texture_storage_2d_array<rgba16float, write>")
    assert texture.declaration(1) == (
        "@group(0) @binding(1) var dst: texture_storage_2d_array<rgba16float, write>;"
    )
    assert Binding("in", name="s", type="sampler").declaration(1) == (
        "@group(0) @binding(1) var s: sampler;"
    )


def test_a_binding_declared_nowhere_twice_or_unknown_is_an_error():
    d = conversion("hwc_to_phwc4.wgsl", Shape4(1, 2, 2, 3), "fp32")  # declares raw, dst

    def render(bindings):
        return render_shader(d.template, bindings, workgroup_size=d.workgroup_size, **d.params)

    assert render(d.bindings) == d.source and d.source.count("@binding(") == 2
    extra = Binding("in", name="unused", type="array<f32>")
    with pytest.raises(ValueError, match="'unused' declared 0 times"):
        render((*d.bindings, extra))
    with pytest.raises(ValueError, match="share a name"):
        render((*d.bindings, d.bindings[0]))
    with pytest.raises(Exception, match="dst"):  # jinja2's UndefinedError: the spec lacks it
        render(d.bindings[:1])


def _programs(monkeypatch):
    """Programs of the core models covering every binding helper: optimized and compact
    sets, buffers and textures, fp32 and fp16, the GEMM 1x1 (gpu class), the fused
    depthwise + 1x1 (FUSED_TILES forced) and an arena plan."""
    monkeypatch.setitem(tile_tables.FUSED_TILES, "llvmpipe", tile_tables.FusedTile())
    variants = [
        (CompileOptions("fp32", "buffer"), Target(adapter="llvmpipe", subgroups=True)),
        (CompileOptions("fp16", "texture"), Target(adapter="llvmpipe")),
        (CompileOptions("fp32", "texture", kernels="compact"), Target(adapter="llvmpipe")),
        (CompileOptions("fp32", "buffer", planner="arena"), Target(adapter="gpu")),
    ]
    for name in CORE_MODELS:
        graph = load_tflite(model_file(name))
        for options, target in variants:
            yield compile_graph(graph, options, target)


def test_dispatches_declare_what_they_bind_at_their_work_group_size(monkeypatch):
    kernels = set()
    for program in _programs(monkeypatch):
        for d in program.dispatches:
            kernels.add(d.kernel)
            found = sorted((int(i), name) for i, _, name in DECLARATION.findall(d.source))
            assert found == [(i, b.name) for i, b in enumerate(d.bindings)], d.kernel
            assert all(b.declaration(i, d.arena) in d.source for i, b in enumerate(d.bindings))
            size = WORKGROUP_SIZE.search(d.source).groups()
            assert tuple(int(x) if x else 1 for x in size) == tuple(d.workgroup_size), d.kernel
    # the helpers' kernels were all there
    assert {"conv1x1", "conv2d", "depthwise", "depthwise_conv1x1", "gemm1x1"} <= kernels


def test_compile_renders_under_the_ops_guard_unless_told_not_to(monkeypatch):
    """A template that fails to render is a ModelError naming the op (compile's guard);
    with render=False (engine-latency) no shader is rendered at all."""
    from engine.errors import ModelError
    from engine.gpu.kernels import base

    graph = load_tflite(model_file(CORE_MODELS[0]))

    def broken(template, **params):
        raise RuntimeError(f"{template} is broken")

    monkeypatch.setattr(base, "render", broken)
    with pytest.raises(ModelError, match=r"op #0 \w+: cannot compile \(RuntimeError: \w+\.wgsl"):
        compile_graph(graph)
    program = compile_graph(graph, render=False)
    assert program.dispatches and not any("source" in vars(d) for d in program.dispatches)
