"""Storage placement: which intermediate tensors live in textures, which in buffers.

Both kinds hold the same PHWC4 data (a buffer: S slices of rows*W vec4; a texture:
a 2-D array, layer s, texel (x, row)). Under storage "texture" an intermediate
tensor is a texture when
- its producer can write a texture (the op's kernel lists "texture" in
  `write_kinds`; an op run on the CPU can: the engine copies either kind),
- every consumer can read one (`read_kinds` of each op reading it, fused
  epilogue operands included; CPU ops can),
- it fits the adapter's texture limits (width, height = B*H, layers = slices);
and a buffer otherwise. Graph inputs and outputs are always buffers: callers
bind and read them (Engine.tensor_layout, encode(), the pre-process kernel).
Under storage "buffer" everything is a buffer.

Pure Python over the graph and per-op capabilities, no GPU:
    caps = [OpStorage(reads={t: kinds}, writes={t: kinds}) or None (CPU op), ...]
    placement = place(graph, caps, "texture", TextureLimits(8192, 256))
    placement.textures       # frozenset of tensor ids
    placement.reasons[t]     # why tensor t stayed a buffer
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.model.ir import Graph, tensors_read
from engine.model.layout import texture_extent

KINDS = ("buffer", "texture")
BOTH = frozenset(KINDS)


@dataclass(frozen=True)
class OpStorage:
    """What one op's kernel accepts: kinds per tensor it reads and per output it writes."""

    reads: Mapping[int, frozenset[str]] = field(default_factory=dict)
    writes: Mapping[int, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class TextureLimits:
    max_dimension_2d: int = 8192
    max_array_layers: int = 256


@dataclass(frozen=True)
class Placement:
    textures: frozenset[int]
    reasons: Mapping[int, str]  # intermediate tensors kept as buffers -> why

    def kind(self, tensor: int) -> str:
        return "texture" if tensor in self.textures else "buffer"


def op_storage(kernel, op, graph: Graph) -> OpStorage | None:
    """The capabilities of `kernel` (engine/gpu/kernels/base.Kernel) on `op`; None: CPU."""
    if kernel is None:
        return None
    reads = {t: frozenset(kernel.read_kinds(op, graph, t)) for t in set(tensors_read(op))}
    writes = {t: frozenset(kernel.write_kinds(op, graph, t)) for t in op.outputs if t >= 0}
    return OpStorage(reads, writes)


def place(
    graph: Graph,
    ops: Sequence[OpStorage | None],
    storage: str,
    limits: TextureLimits = TextureLimits(),
) -> Placement:
    """Texture tensors for `storage` ("buffer" or "texture"); see the module docstring."""
    if storage not in KINDS:
        raise ValueError(f"storage must be one of {KINDS}, not {storage!r}")
    if len(ops) != len(graph.ops):
        raise ValueError(f"{len(ops)} capabilities for {len(graph.ops)} ops")
    io = set(graph.inputs) | set(graph.outputs)
    allowed: dict[int, frozenset[str]] = {}
    why: dict[int, str] = {}

    def restrict(t: int, kinds: frozenset[str], reason: str) -> None:
        before = allowed.get(t, BOTH)
        allowed[t] = before & kinds
        if "texture" in before and "texture" not in kinds:
            why.setdefault(t, reason)

    for i, op in enumerate(graph.ops):
        cap = ops[i]
        for t in op.outputs:
            if t < 0 or t in io or graph.tensors[t].is_constant:
                continue
            kinds = BOTH if cap is None else cap.writes.get(t, frozenset({"buffer"}))
            restrict(t, kinds, f"written by #{i} {op.type}")
        for t in set(tensors_read(op)):
            if t in io or graph.tensors[t].is_constant:
                continue
            kinds = BOTH if cap is None else cap.reads.get(t, frozenset({"buffer"}))
            restrict(t, kinds, f"read by #{i} {op.type}")
    textures = set()
    for t, kinds in allowed.items():
        if storage == "buffer":
            continue
        if "texture" not in kinds:
            continue
        w, h, layers = texture_extent(graph.tensors[t].shape)
        if min(w, h, layers) < 1:
            why[t] = "empty tensor"
            continue
        if max(w, h) > limits.max_dimension_2d or layers > limits.max_array_layers:
            why[t] = f"texture extent {(w, h, layers)} over the adapter's limits"
            continue
        textures.add(t)
    if storage == "buffer":
        why = {t: "storage 'buffer'" for t in allowed}
    return Placement(frozenset(textures), {t: r for t, r in why.items() if t not in textures})
