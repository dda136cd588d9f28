"""The quiet-machine gate: what else ran while a benchmark ran.

On the shared 2-core development machines lavapipe and SwiftShader run shaders on the
same CPUs as everything else, so one busy neighbour halves the engine's speed while
XNNPACK loses far less (docs/benchmarks.md). Every benchmark records the load average
and the CPU count before and after it ran, and calls the machine busy when the
1-minute load per usable CPU exceeds `max_per_cpu` (0.5: one of two cores taken).

    gate = LoadGate.check(max_per_cpu=0.5)   # before the runs
    gate = gate.after()                      # after them: the worse of both counts
    row["load"] = gate.as_dict(); if gate.busy: note "busy"
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from engine.tools.bench.machine import usable_cpus

MAX_LOAD_PER_CPU = 0.5


def load_average() -> tuple[float, float, float]:
    """(1, 5, 15)-minute load averages; zeros where the OS has none."""
    try:
        return os.getloadavg()
    except OSError:
        return (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class LoadGate:
    """Load before (and after) a benchmark and whether it was too busy to trust."""

    cpus: int
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] | None = None
    max_per_cpu: float = MAX_LOAD_PER_CPU

    @classmethod
    def check(cls, max_per_cpu: float = MAX_LOAD_PER_CPU) -> LoadGate:
        return cls(usable_cpus(), load_average(), None, max_per_cpu)

    def after(self) -> LoadGate:
        """The same gate with the load after the runs recorded."""
        return LoadGate(self.cpus, self.load_before, load_average(), self.max_per_cpu)

    @property
    def per_cpu(self) -> float:
        """1-minute load per usable CPU before the runs: other work, not ours."""
        return self.load_before[0] / max(1, self.cpus)

    @property
    def busy(self) -> bool:
        return self.per_cpu > self.max_per_cpu

    def label(self) -> str:
        """'load 1.16/2 CPUs (quiet)' or '... (busy)', for notes and table headers."""
        state = "busy" if self.busy else "quiet"
        after = f", {self.load_after[0]:.2f} after" if self.load_after else ""
        return f"load {self.load_before[0]:.2f}{after} on {self.cpus} CPUs ({state})"

    def as_dict(self) -> dict:
        return {**asdict(self), "per_cpu": self.per_cpu, "busy": self.busy}
