"""Graph transforms: small named passes run in one ordered list.

A pass takes a Graph and returns a new Graph plus a `PassResult` saying
whether it applied (how many rewrites), was skipped (nothing to do) or
declined (a candidate it could not rewrite, with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from engine.model.ir import Graph, Op


@dataclass
class PassResult:
    name: str
    applied: int = 0
    declined: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "applied" if self.applied else ("declined" if self.declined else "skipped")

    def __str__(self) -> str:
        text = f"{self.name}: {self.status}"
        if self.applied:
            text += f" x{self.applied}"
        if self.declined:
            text += f" (declined {len(self.declined)}: {self.declined[0]}{' ...' if len(self.declined) > 1 else ''})"
        return text


def mappable(graph: Graph, *tensors: int) -> bool:
    """Every tensor (ids < 0 ignored) has a PHWC4 mapping: rank <= 4, no dynamic dimension.
    Passes skip ops touching others; the engine then names the op (engine/gpu/checks.py)."""
    return all(
        t < 0 or (len(graph.tensors[t].shape) <= 4 and min(graph.tensors[t].shape, default=0) >= 0)
        for t in tensors
    )


def with_attrs(op: Op, **attrs) -> Op:
    return replace(op, attrs={**op.attrs, **attrs})


def rewire(graph: Graph, old: int, new: int, ops: list[Op]) -> list[Op]:
    """Make every reader of tensor `old` read `new` instead."""
    out = []
    for op in ops:
        if old in op.inputs:
            op = replace(op, inputs=tuple(new if t == old else t for t in op.inputs))
        out.append(op)
    return out


def sole_consumer(graph: Graph, tensor: int) -> int | None:
    """Index of the only op reading `tensor` when it is not a graph output, else None."""
    if tensor in graph.outputs:
        return None
    readers = graph.consumers().get(tensor, [])
    return readers[0] if len(readers) == 1 else None


def drop_op(graph: Graph, index: int, keep: int) -> Graph:
    """Remove op `index` whose output is replaced by tensor `keep` everywhere."""
    op = graph.ops[index]
    out = op.outputs[0]
    ops = [o for i, o in enumerate(graph.ops) if i != index]
    ops = rewire(graph, out, keep, ops)
    outputs = [keep if t == out else t for t in graph.outputs]
    return Graph(graph.tensors, ops, list(graph.inputs), outputs, graph.name)
