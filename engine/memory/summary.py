"""Per-plan stats, the best plan and the table for `engine-inspect --memory`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

from engine.memory.arena import DEFAULT_ALIGNMENT
from engine.memory.plan import Plan
from engine.memory.records import TensorUsage, lower_bound, naive_bytes
from engine.memory.registry import strategies

# Strategy tables, by storage kind, derived from the planner registry (registry.py).
BUFFER_STRATEGIES = strategies("buffer")
TEXTURE_STRATEGIES = strategies("texture")  # records need TensorUsage.extent
STRATEGIES = {**BUFFER_STRATEGIES, **TEXTURE_STRATEGIES}


@dataclass(frozen=True)
class PlanStats:
    strategy: str
    total_bytes: int
    naive_bytes: int
    lower_bound: int
    objects: int  # shared objects (1 for a non-empty arena)
    ratio: float  # total / lower bound (1.0 when both are 0)
    time_ms: float  # planning time
    plan: Plan = field(compare=False, repr=False)

    def as_dict(self) -> dict:
        """The figures without the plan (for JSON)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "plan"}


def plan_with(
    name: str, records: Sequence[TensorUsage], alignment: int = DEFAULT_ALIGNMENT
) -> PlanStats:
    """Run one strategy by name and measure it."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown memory strategy {name!r}; known: {', '.join(STRATEGIES)}")
    start = time.perf_counter()
    result = STRATEGIES[name](records, alignment)
    ms = (time.perf_counter() - start) * 1e3
    bound = lower_bound(records)
    total = result.total_bytes
    ratio = total / bound if bound else 1.0
    return PlanStats(name, total, naive_bytes(records), bound, result.objects, ratio, ms, result)


def plan_all(
    records: Sequence[TensorUsage],
    alignment: int = DEFAULT_ALIGNMENT,
    names: Sequence[str] | None = None,
) -> list[PlanStats]:
    """Stats of every strategy (the texture ones only when every record has an extent)."""
    if names is None:
        textures = all(r.extent is not None for r in records)
        names = list(STRATEGIES if textures else BUFFER_STRATEGIES)
    return [plan_with(name, records, alignment) for name in names]


def best_plan(
    records: Sequence[TensorUsage], alignment: int = DEFAULT_ALIGNMENT, storage: str = "buffer"
) -> PlanStats:
    """The smallest plan for `storage` ("buffer" or "texture"); ties: fewer objects, then
    registry order. This is the engine's default plan."""
    table = {"buffer": BUFFER_STRATEGIES, "texture": TEXTURE_STRATEGIES}
    if storage not in table:
        raise ValueError(f"storage must be 'buffer' or 'texture', got {storage!r}")
    stats = plan_all(records, alignment, list(table[storage]))
    return min(stats, key=lambda s: (s.total_bytes, s.objects))


def format_bytes(n: int) -> str:
    """Bytes as B, KiB or MiB with two decimals."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


def format_table(stats: Sequence[PlanStats | Mapping]) -> str:
    """Markdown table, one row per plan: PlanStats or their dicts (as_dict, JSON).

    Keys of dict rows that are not PlanStats fields (e.g. "precision") lead each row.
    """
    rows = [s.as_dict() if isinstance(s, PlanStats) else dict(s) for s in stats]
    if not rows:
        return "(no plans)"
    known = {f.name for f in fields(PlanStats)}
    extra = [k for k in rows[0] if k not in known]
    head = [*extra, "strategy", "total", "objects", "lower bound", "naive", "/ bound", "ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(extra) + "---|" + "---:|" * 6]
    for r in rows:
        cells = [str(r.get(k, "")) for k in extra] + [
            r["strategy"],
            format_bytes(r["total_bytes"]),
            str(r["objects"]),
            format_bytes(r["lower_bound"]),
            format_bytes(r["naive_bytes"]),
            f"{r['ratio']:.3f}",
            f"{r['time_ms']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
