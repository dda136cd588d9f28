"""Collapse rank > 4 data-movement chains into one rank-4 op.

Keras' nearest UpSampling2D converts to RESHAPE [B,H,W,C] -> [B,H,1,W,C], TILE along the
new axis, RESHAPE -> [B,2H,W,1,C], TILE, RESHAPE -> [B,2H,2W,C]: rank-5 tensors the
PHWC4 layout cannot hold. A chain is:
- it starts at a rank-4 tensor x and ends at a rank-4 tensor y, every tensor between
  them has rank > 4 and exactly one reader (and is not a graph output);
- every op is pure data movement with constant parameters (RESHAPE, TILE, EXPAND_DIMS,
  SQUEEZE, TRANSPOSE).
Which element of x each element of y is comes from running the chain's reference kernels
on the indices of x (exact). The chain becomes:
- RESIZE_NEAREST_NEIGHBOR (no align corners, no half pixel: in = floor(out / k)) when y
  is x repeated k_h times along H and k_w times along W;
- TILE with rank-4 multiples when y is x tiled.
Declined: any other index map (the engine then names the rank-5 op it cannot store).
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph, Op, Tensor
from engine.reference import registry
from engine.transforms.base import PassResult, sole_consumer

MOVES = {"RESHAPE", "TILE", "EXPAND_DIMS", "SQUEEZE", "TRANSPOSE"}


def _chain(graph: Graph, start: int) -> list[int] | None:
    """Op indices of the chain starting at op `start` (rank 4 in, rank > 4 out), or None."""
    ops, tensors = graph.ops, graph.tensors
    chain, i = [], start
    while True:
        op = ops[i]
        if op.type not in MOVES or len(op.outputs) != 1:
            return None
        if any(t >= 0 and tensors[t].data is None for t in op.inputs[1:]):
            return None  # parameters computed at run time
        chain.append(i)
        out = op.outputs[0]
        if len(tensors[out].shape) <= 4:
            return chain
        nxt = sole_consumer(graph, out)
        if nxt is None or ops[nxt].inputs[0] != out:
            return None
        i = nxt


def _index_map(graph: Graph, chain: list[int]) -> np.ndarray:
    """For every element of the chain's output, the flat index of the input element it is."""
    first = graph.ops[chain[0]]
    x = graph.tensors[first.inputs[0]]
    value = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    for i in chain:
        op = graph.ops[i]
        args = [value] + [graph.tensors[t].data if t >= 0 else None for t in op.inputs[1:]]
        value = registry.kernel(op.type)(op, args)[0]
    return value


def _as_rank4_op(src: tuple, dst: tuple, index: np.ndarray) -> tuple[str, list[int]] | None:
    """("RESIZE_NEAREST_NEIGHBOR", [H', W']) or ("TILE", multiples) reproducing `index`."""
    if index.shape != dst:
        return None
    flat = np.arange(int(np.prod(src)), dtype=np.int64).reshape(src)
    b, h, w, c = src
    if dst[0] == b and dst[3] == c and dst[1] % h == 0 and dst[2] % w == 0:
        ys, xs = np.arange(dst[1]) // (dst[1] // h), np.arange(dst[2]) // (dst[2] // w)
        if np.array_equal(flat[:, ys][:, :, xs], index):
            return "RESIZE_NEAREST_NEIGHBOR", [dst[1], dst[2]]
    if all(d % s == 0 for d, s in zip(dst, src, strict=True)):
        reps = [d // s for d, s in zip(dst, src, strict=True)]
        if np.array_equal(np.tile(flat, reps), index):
            return "TILE", reps
    return None


def collapse_upsample(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("collapse_upsample")
    i = 0
    while i < len(graph.ops):
        op = graph.ops[i]
        src = graph.tensors[op.inputs[0]] if op.inputs else None
        out = graph.tensors[op.outputs[0]] if op.outputs else None
        if src is None or out is None or len(src.shape) > 4 or len(out.shape) <= 4:
            i += 1
            continue
        chain = _chain(graph, i)
        if chain is None or src.is_constant:
            result.declined.append(f"#{i} {op.type} -> rank {len(out.shape)}: not a chain of "
                                   "data movement with constant parameters back to rank 4")  # fmt: skip
            i += 1
            continue
        last = graph.ops[chain[-1]]
        dst = graph.tensors[last.outputs[0]]
        try:
            index = _index_map(graph, chain)
        except ModelError as exc:
            result.declined.append(f"#{i} {op.type}: {exc}")
            i += 1
            continue
        rank = len(src.shape)
        pad = (1,) * (4 - rank)
        found = None
        if len(dst.shape) == rank:
            found = _as_rank4_op(pad + src.shape, pad + dst.shape, index.reshape(pad + dst.shape))
        if found and found[0] == "TILE":
            found = ("TILE", found[1][4 - rank :])
        elif found and rank < 4:
            found = None  # RESIZE_NEAREST_NEIGHBOR takes [B, H, W, C] only
        if found is None:
            result.declined.append(f"#{i} {op.type} -> rank {len(out.shape)}: ops #{chain[0]}.."
                                   f"#{chain[-1]} are neither a nearest upsampling nor a tile")  # fmt: skip
            i += 1
            continue
        graph = _replace(graph, chain, *found)
        result.applied += 1
    return graph, result


def _replace(graph: Graph, chain: list[int], op_type: str, param: list[int]) -> Graph:
    first, last = graph.ops[chain[0]], graph.ops[chain[-1]]
    tensors = list(graph.tensors)
    name = f"{tensors[last.outputs[0]].name}/{op_type.lower()}"
    tensors.append(Tensor(name, (len(param),), "int32", np.asarray(param, np.int32)))
    attrs = {"align_corners": False, "half_pixel_centers": False}
    new = Op(op_type, (first.inputs[0], len(tensors) - 1), last.outputs,
             attrs if op_type == "RESIZE_NEAREST_NEIGHBOR" else {})  # fmt: skip
    ops = [new if k == chain[-1] else o for k, o in enumerate(graph.ops) if k not in chain[:-1]]
    return Graph(tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)
