"""Tensor storage on the GPU: allocate exactly what the memory plans say.

Two storage kinds (engine/gpu/placement.py decides which tensor gets which):
- buffers: graph inputs and outputs get buffers of their own (callers bind them);
  intermediates follow the buffer plan: one buffer per shared object, or one
  arena buffer with each tensor at its aligned offset; every buffer tensor is a
  `View` (buffer, offset, size) that bind groups use. The arena is cleared once
  at creation: wgpu tracks lazy zero-initialisation per range, and shader writes
  into never-initialised ranges at non-zero offsets were seen lost.
- textures: intermediates placed in textures follow a texture plan (the texture
  strategy of a planner in engine/memory/registry.py, by default the smallest): one 2-D
  array texture per shared object, format rgba32float (fp32) or rgba16float (fp16);
  every texture tensor is a `TextureView`: the object, a 2d-array view of the layers
  the plan gives the tensor (so tensors in other layers of the object may be bound in
  the same dispatch), the tensor's own extent (W, B*H, slices) and its tiles (slices
  side by side per layer, engine/memory/plan.py; `texture_tiles()` tells the kernels).
  Textures are zero-filled at creation.

The plans: `plan_storage()` gives the buffer plan, the texture plan (None when no
tensor is a texture) and `memory`, their combined figures as one PlanStats
(strategy "BUFFER+TEXTURE", or TEXTURE alone when no intermediate is a buffer;
bytes and objects summed; lower bound over all intermediates; `memory.plan` is the
buffer plan). With no textures `memory` is
the buffer plan's own PlanStats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.memory import (
    ArenaPlan,
    ObjectPlan,
    PlanStats,
    TexturePlan,
    best_plan,
    lower_bound,
    plan_with,
    usage_records,
)
from engine.memory import planner as registry_planner
from engine.memory.plan import footprint
from engine.model.ir import Graph
from engine.model.layout import phwc4_bytes, texture_extent
from engine.precision import Precision


@dataclass(frozen=True)
class View:
    buffer: object
    offset: int
    size: int


@dataclass(frozen=True)
class TextureView:
    """A tensor in a (shared) 2-D array texture: slice s at layer `layer` + s / (a * b) of
    the object, texel (x + W * (s % a), row + B*H * (s / a % b)) for tiles (a, b)."""

    texture: object
    view: object  # dimension "2d-array", the object's layers [layer, layer + layers)
    extent: tuple[int, int, int]  # the tensor's own (W, B*H, slices)
    layer: int = 0  # first layer of the object
    tiles: tuple[int, int] = (1, 1)  # slices side by side (across, down) per layer

    @property
    def footprint(self) -> tuple[int, int, int]:
        """(width, height, layers) it covers in its object, from (0, 0, `layer`)."""
        w, h, _, layers = footprint(self.extent, self.tiles)
        return w, h, layers


@dataclass(frozen=True)
class StoragePlan:
    memory: PlanStats  # the whole plan's figures (Engine.memory)
    buffers: PlanStats
    textures: PlanStats | None  # None: no texture tensors


def plan_storage(
    graph: Graph,
    textures: frozenset[int],
    planner: str | None,
    texture_planner: str | None,
    bytes_per_element: int,
    alignment: int,
) -> StoragePlan:
    """Plans for the buffer intermediates and for the `textures` ones (see the docstring).

    `planner`: a registry name (engine/memory/registry.py) that plans both kinds, each with
    its own strategy; None: the smallest plan of each kind. `texture_planner` overrides the
    texture plan (a planner name, or its strategy name "texture_<name>")."""
    records = usage_records(graph, bytes_per_element=bytes_per_element)
    in_buffers = [r for r in records if r.tensor not in textures]
    in_textures = [r for r in records if r.tensor in textures]
    buffers = _plan_kind(in_buffers, "buffer", planner, alignment, "planner")
    if not in_textures:
        return StoragePlan(buffers, buffers, None)
    option = "texture_planner" if texture_planner is not None else "planner"
    texture = _plan_kind(in_textures, "texture", texture_planner or planner, alignment, option)
    bound = lower_bound(records)
    total = buffers.total_bytes + texture.total_bytes
    memory = PlanStats(
        strategy=f"{buffers.strategy}+{texture.strategy}" if buffers.objects else texture.strategy,
        total_bytes=total,
        naive_bytes=buffers.naive_bytes + texture.naive_bytes,
        lower_bound=bound,
        objects=buffers.objects + texture.objects,
        ratio=total / bound if bound else 1.0,
        time_ms=buffers.time_ms + texture.time_ms,
        plan=buffers.plan,
    )
    return StoragePlan(memory, buffers, texture)


def _plan_kind(records, kind: str, name: str | None, alignment: int, option: str) -> PlanStats:
    """The plan of one storage kind by planner `name` (None: the smallest)."""
    if name is None:
        return best_plan(records, alignment=alignment, storage=kind)
    if kind == "texture" and name.startswith("texture_"):
        name = name.removeprefix("texture_")
    try:
        found = registry_planner(name, kind)
    except ValueError as exc:
        raise ValueError(f"{option}: {exc}") from None
    return plan_with(found.strategy_name(kind), records, alignment=alignment)


def allocate_textures(
    device, graph: Graph, stats: PlanStats, precision: Precision
) -> dict[int, TextureView]:
    """The texture objects of a texture plan, zero-filled; a TextureView per tensor."""
    import wgpu

    plan = stats.plan
    assert isinstance(plan, TexturePlan), plan
    usage = (
        wgpu.TextureUsage.STORAGE_BINDING
        | wgpu.TextureUsage.TEXTURE_BINDING
        | wgpu.TextureUsage.COPY_SRC
        | wgpu.TextureUsage.COPY_DST
    )
    fmt = precision.texture_format
    objects = []
    for i, extent in enumerate(plan.extents):
        tex = device.create_texture(
            size=extent, format=fmt, dimension="2d", usage=usage, label=f"texture{i}"
        )
        fill_texture(device, tex, 0.0, precision)
        objects.append(tex)
    views: dict[tuple[int, int, int], object] = {}  # (object, first layer, layers) -> view
    tensors = {}
    for t, obj in plan.assignment.items():
        extent = texture_extent(graph.tensors[t].shape)
        _, _, layer, count = plan.footprint(t, extent)
        key = (obj, layer, count)
        if key not in views:
            views[key] = objects[obj].create_view(
                dimension="2d-array", base_array_layer=layer, array_layer_count=count
            )
        tensors[t] = TextureView(objects[obj], views[key], extent, layer, plan.tiles.get(t, (1, 1)))
    return tensors


def texture_tiles(graph: Graph, stats: PlanStats | None) -> dict[int, tuple[int, int, int, int]]:
    """The folded tensors of a texture plan: tensor -> (across, down, W, B*H), what the
    kernels' texture addressing needs (BuildContext.texture_tiles)."""
    if stats is None:
        return {}
    plan = stats.plan
    assert isinstance(plan, TexturePlan), plan
    folded = {}
    for t, (across, down) in plan.tiles.items():
        if across * down > 1:
            w, rows, _ = texture_extent(graph.tensors[t].shape)
            folded[t] = (across, down, w, rows)
    return folded


def fill_texture(device, texture, value: float, precision: Precision) -> None:
    """Every texel of every layer of `texture` set to `value` (all four lanes)."""
    w, h, layers = texture.size
    data = np.full((layers, h, w, 4), value, precision.dtype)
    write_texels(device, texture, data)


def write_texels(device, texture, data: np.ndarray) -> None:
    """`data` [layers, rows, W, 4] into the texture's corner (0, 0, layer 0)."""
    layers, rows, w, _ = data.shape
    layout = {"offset": 0, "bytes_per_row": w * 4 * data.itemsize, "rows_per_image": rows}
    device.queue.write_texture(
        {"texture": texture, "origin": (0, 0, 0), "mip_level": 0},
        np.ascontiguousarray(data),
        layout,
        (w, rows, layers),
    )


def read_texels(device, tex: TextureView, dtype) -> np.ndarray:
    """A texture tensor's texels as [slices, rows, W, 4] of `dtype` (the storage type)."""
    (w, rows, slices), (across, down), size = tex.extent, tex.tiles, tex.footprint
    item = np.dtype(dtype).itemsize
    raw = device.queue.read_texture(
        {"texture": tex.texture, "origin": (0, 0, tex.layer), "mip_level": 0},
        {"offset": 0, "bytes_per_row": size[0] * 4 * item, "rows_per_image": size[1]},
        size,
    )
    data = np.frombuffer(raw, dtype, size[0] * size[1] * size[2] * 4)
    tiles = data.reshape(size[2], down, rows, across, w, 4).transpose(0, 1, 3, 2, 4, 5)
    return tiles.reshape(-1, rows, w, 4)[:slices]


def write_tensor_texels(device, tex: TextureView, data: np.ndarray) -> None:
    """`data` [slices, rows, W, 4] into a texture tensor's texels (its tiles and layers)."""
    (w, rows, slices), (across, down), size = tex.extent, tex.tiles, tex.footprint
    padded = np.zeros((size[2] * across * down, rows, w, 4), data.dtype)
    padded[:slices] = data
    tiles = padded.reshape(size[2], down, across, rows, w, 4).transpose(0, 1, 3, 2, 4, 5)
    folded = np.ascontiguousarray(tiles.reshape(size[2], size[1], size[0], 4))
    layout = {"offset": 0, "bytes_per_row": size[0] * 4 * data.itemsize, "rows_per_image": size[1]}
    origin = {"texture": tex.texture, "origin": (0, 0, tex.layer), "mip_level": 0}
    device.queue.write_texture(origin, folded, layout, size)


def allocate(
    device,
    graph: Graph,
    stats: PlanStats,
    bytes_per_element: int,
    textures: frozenset[int] = frozenset(),
) -> dict[int, View]:
    """Buffers for every non-constant tensor not in `textures`, shared as `stats.plan` says."""
    import wgpu

    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    plan = stats.plan
    views: dict[int, View] = {}
    if isinstance(plan, ArenaPlan) and plan.size:
        arena = device.create_buffer(size=_round16(plan.size), usage=usage, label="arena")
        _clear(device, arena)
        for t, offset in plan.offsets.items():
            views[t] = View(arena, offset, _tensor_bytes(graph, t, bytes_per_element))
    elif isinstance(plan, ObjectPlan):
        objects = [
            device.create_buffer(size=_round16(size), usage=usage, label=f"shared{i}")
            for i, size in enumerate(plan.object_sizes)
        ]
        for t, obj in plan.assignment.items():
            views[t] = View(objects[obj], 0, _tensor_bytes(graph, t, bytes_per_element))
    for t, tensor in enumerate(graph.tensors):
        if t not in views and not tensor.is_constant and t not in textures:
            size = _tensor_bytes(graph, t, bytes_per_element)
            views[t] = View(
                device.create_buffer(size=size, usage=usage, label=tensor.name), 0, size
            )
    return views


def _tensor_bytes(graph: Graph, t: int, bytes_per_element: int) -> int:
    return _round16(phwc4_bytes(graph.tensors[t].shape, bytes_per_element))


def _round16(n: int) -> int:
    return max(16, -(-n // 16) * 16)


def _clear(device, buffer) -> None:
    encoder = device.create_command_encoder()
    encoder.clear_buffer(buffer)
    device.queue.submit([encoder.finish()])
