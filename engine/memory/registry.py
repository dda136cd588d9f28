"""The planner registry: every memory planner, once, with the storage kinds it plans.

One line per planner. Everything that lists planners reads this: the strategy tables of
summary.py (engine-inspect --memory), Engine(planner=...) validation and its plan per storage
kind (engine/gpu/storage.py), ar-demo's --planner choices and the HUD's live switch.

A planner plans "buffer" intermediates (shared buffers or one arena), "texture" ones
(shared 2-D array textures), or both. A texture strategy is named "texture_<planner>" in
plans and tables (PlanStats.strategy), so a plan says which kind it is.

Adding a planner: its file (a function records -> Plan), one line below, a test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.memory.arena import arena
from engine.memory.greedy import greedy
from engine.memory.greedy_by_size import greedy_by_size
from engine.memory.mincostflow import mincostflow
from engine.memory.naive import naive, texture_naive
from engine.memory.plan import Plan
from engine.memory.records import TensorUsage
from engine.memory.texture import texture_greedy, texture_greedy_by_size
from engine.memory.texture_arena import texture_arena

Strategy = Callable[[Sequence[TensorUsage], int], Plan]  # (records, alignment) -> plan
KINDS = ("buffer", "texture")


def unaligned(fn: Callable[[Sequence[TensorUsage]], Plan]) -> Strategy:
    """A strategy whose objects need no offset alignment (one object per tensor group)."""
    return lambda records, alignment: fn(records)


@dataclass(frozen=True)
class Planner:
    name: str
    description: str
    buffer: Strategy | None = None  # plans buffer intermediates
    texture: Strategy | None = None  # plans texture intermediates

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in KINDS if getattr(self, k) is not None)

    def strategy_name(self, kind: str) -> str:
        return self.name if kind == "buffer" else f"texture_{self.name}"


PLANNERS: dict[str, Planner] = {p.name: p for p in (
    Planner("naive", "one object per tensor, no sharing",
            unaligned(naive), unaligned(texture_naive)),
    Planner("greedy", "reuse the first free object, grown to fit (execution order)",
            unaligned(greedy), unaligned(texture_greedy)),
    Planner("greedy_by_size", "largest tensors first, each into the best-fitting free object",
            unaligned(greedy_by_size), unaligned(texture_greedy_by_size)),
    Planner("mincostflow", "reuse chains from a min-cost flow over producer/consumer pairs",
            unaligned(mincostflow)),
    Planner("arena", "one buffer, each tensor at an aligned offset (exact search from a "
            "best-fit start); textures: tensors folded into layers of few shared textures",
            arena, unaligned(texture_arena)),
)}  # fmt: skip


def planner(name: str, kind: str | None = None) -> Planner:
    """The planner called `name`, which must plan `kind` when given; ValueError naming the
    choices otherwise."""
    if name not in PLANNERS:
        raise ValueError(f"unknown memory planner {name!r}; known: {', '.join(PLANNERS)}")
    found = PLANNERS[name]
    if kind is not None and kind not in found.kinds:
        able = ", ".join(planners_for(kind))
        raise ValueError(f"planner {name!r} does not plan {kind}s; for {kind}s use {able}")
    return found


def planners_for(kind: str) -> tuple[str, ...]:
    """Names of the planners that plan `kind` ("buffer" or "texture"), in registry order."""
    if kind not in KINDS:
        raise ValueError(f"storage kind must be one of {KINDS}, not {kind!r}")
    return tuple(name for name, p in PLANNERS.items() if kind in p.kinds)


def strategies(kind: str) -> dict[str, Strategy]:
    """Strategy name -> function for one storage kind (e.g. "texture_greedy")."""
    return {p.strategy_name(kind): getattr(p, kind) for p in PLANNERS.values() if kind in p.kinds}
