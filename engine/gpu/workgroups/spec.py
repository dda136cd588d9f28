"""What a kernel tells the selector, and what the selector answers.

- `WorkShape`: output work items one invocation computes along x, y, z
  (e.g. 4 pixels x 4 slices: WorkShape(4, 1, 4));
- `KernelSignature`: one kernel's problem space and the work shapes it supports;
  equal signatures get equal choices (it is the tuning cache key);
- `Candidate`: a work group size with a work shape; `Choice`: the one picked,
  with where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

Triple = tuple[int, int, int]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class WorkShape:
    """Work items per invocation along x, y, z."""

    x: int = 1
    y: int = 1
    z: int = 1

    def __post_init__(self) -> None:
        if min(self.x, self.y, self.z) < 1:
            raise ValueError(f"WorkShape{self.as_tuple()}: every axis must be >= 1")

    def as_tuple(self) -> Triple:
        return (self.x, self.y, self.z)

    @property
    def volume(self) -> int:
        return self.x * self.y * self.z

    def text(self) -> str:
        return "x".join(map(str, self.as_tuple()))


@dataclass(frozen=True)
class KernelSignature:
    """One kernel specialisation, as the work group selector sees it.

    space: work items along x, y, z after vectorisation (one item = one vec4 of
      output: e.g. output columns, rows, slices), before per-invocation blocking;
    kind: "conv", "depthwise", "elementwise" or anything else (rule V reads it);
    bytes_x: bytes one work item loads contiguously along x (16: an fp32 vec4,
      8: fp16); an invocation with work.x items loads work.x times that;
    work: the work shapes the kernel supports, best first (the first is its default);
    params: anything else that changes the kernel's speed (kernel size, stride,
      input slices, precision), so that such kernels get their own cache entry.
    """

    kernel: str
    space: Triple
    kind: str = "other"
    bytes_x: int = 16
    work: tuple[WorkShape, ...] = (WorkShape(),)
    params: tuple[tuple[str, int | str], ...] = ()

    def __post_init__(self) -> None:
        if len(self.space) != 3 or min(self.space) < 1:
            raise ValueError(f"{self.kernel}: space {self.space} must be 3 counts >= 1")
        if not self.work or len(set(self.work)) != len(self.work):
            raise ValueError(f"{self.kernel}: work shapes {self.work} must be non-empty, unique")
        if self.bytes_x < 1:
            raise ValueError(f"{self.kernel}: bytes_x {self.bytes_x} must be >= 1")

    def key(self) -> str:
        """A stable text key (the persistent cache's)."""
        params = ",".join(f"{k}={v}" for k, v in self.params)
        work = ",".join(w.text() for w in self.work)
        space = "x".join(map(str, self.space))
        return f"{self.kernel}|{self.kind}|{space}|b{self.bytes_x}|{work}|{params}"


@dataclass(frozen=True)
class Candidate:
    """A work group size (invocations along x, y, z) and the work of each invocation."""

    workgroup: Triple
    work: WorkShape

    @property
    def size(self) -> int:
        """Invocations per work group."""
        return prod(self.workgroup)

    @property
    def covered(self) -> Triple:
        """Work items one work group covers along x, y, z."""
        g, w = self.workgroup, self.work.as_tuple()
        return (g[0] * w[0], g[1] * w[1], g[2] * w[2])

    def groups(self, space: Triple) -> Triple:
        """The dispatch grid (work group counts) that covers `space`."""
        c = self.covered
        return (ceil_div(space[0], c[0]), ceil_div(space[1], c[1]), ceil_div(space[2], c[2]))

    def waste(self, space: Triple) -> float:
        """Padding: work items the grid covers beyond `space`, as a fraction of it."""
        padded = prod(g * c for g, c in zip(self.groups(space), self.covered, strict=True))
        return padded / prod(space) - 1.0


@dataclass(frozen=True)
class Choice(Candidate):
    """The selected candidate; source is "table", "heuristic", "tuned" or "cache"."""

    source: str = "heuristic"

    @property
    def candidate(self) -> Candidate:
        return Candidate(self.workgroup, self.work)

    @classmethod
    def of(cls, c: Candidate, source: str) -> Choice:
        return cls(c.workgroup, c.work, source)
