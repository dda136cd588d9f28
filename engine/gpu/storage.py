"""Tensor storage on the GPU: allocate exactly what the memory plan says.

- graph inputs and outputs get buffers of their own (callers bind them);
- intermediates follow the plan: one buffer per shared object, or one arena
  buffer with each tensor at its aligned offset;
- every tensor is then a `View` (buffer, offset, size) that bind groups use.
The arena is cleared once at creation: wgpu tracks lazy zero-initialisation
per range, and shader writes into never-initialised ranges at non-zero
offsets were seen lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.memory import ArenaPlan, ObjectPlan, PlanStats, best_plan, plan_with, usage_records
from engine.memory.layout import phwc4_bytes
from engine.model.ir import Graph

BUFFER_PLANNERS = ("naive", "greedy", "greedy_by_size", "mincostflow", "arena")


@dataclass(frozen=True)
class View:
    buffer: object
    offset: int
    size: int


def plan_memory(
    graph: Graph, planner: str | None, bytes_per_element: int, alignment: int
) -> PlanStats:
    """The plan for `graph`'s intermediates: `planner` by name, or the smallest one."""
    records = usage_records(graph, bytes_per_element=bytes_per_element)
    if planner is None:
        return best_plan(records, alignment=alignment)
    if planner not in BUFFER_PLANNERS:
        raise ValueError(
            f"planner must be one of {BUFFER_PLANNERS} (or None for the best), not {planner!r}"
        )
    return plan_with(planner, records, alignment=alignment)


def allocate(device, graph: Graph, stats: PlanStats, bytes_per_element: int) -> dict[int, View]:
    """Buffers for every non-constant tensor, shared as `stats.plan` says."""
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
        if t not in views and not tensor.is_constant:
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
