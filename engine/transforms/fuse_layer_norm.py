"""Fuse a converted LayerNormalization into one LAYER_NORM op (engine/reference/normalization.py).

TFLiteConverter turns Keras' LayerNormalization over the last axis into
    m = MEAN(x, -1)   v = MEAN(SQUARED_DIFFERENCE(x, m), -1)   r = RSQRT(ADD(v, eps))
    g = MUL(r, gamma)   then a tail of NEG / MUL / ADD / SUB giving (x - m) * g + beta
in one of several arrangements (x*g + (beta - m*g), x*g + (-m)*g + beta, ...). So:
1. the core is matched by structure: the two MEANs over the last axis (keep_dims), the
   SQUARED_DIFFERENCE with x, the ADD of a scalar eps > 0, the RSQRT, an optional MUL by
   a per-channel constant gamma;
2. tail candidates are the NEG / MUL / ADD / SUB ops after it reading only x, constants
   and the region's own tensors; the output y is the last candidate whose region is
   closed (nothing outside reads its inner tensors) and whose function is a LayerNorm:
   beta = region(0) (then every term but beta is 0), and on random rows the region's
   reference kernels give (x - m) * rsqrt(v + eps) * gamma + beta within 1e-9 (float64).
Declined (with the reason): a core without its tail, inner tensors read elsewhere, a
region that does not compute a LayerNorm.
"""

from __future__ import annotations

import numpy as np

from engine.model.ir import Graph, Op, Tensor, compact
from engine.reference import Interpreter
from engine.transforms.base import PassResult

TAIL = {"NEG", "MUL", "ADD", "SUB"}
TOLERANCE = 1e-9  # float64 probe: the region and the formula differ by rounding only


def _last_axis_mean(graph: Graph, op: Op) -> bool:
    if op.type != "MEAN" or not op.attrs.get("keep_dims", False) or len(op.inputs) < 2:
        return False
    axes, x = graph.tensors[op.inputs[1]], graph.tensors[op.inputs[0]]
    rank = len(x.shape)
    return (
        axes.is_constant
        and rank > 0
        and [int(a) % rank for a in axes.data.reshape(-1)] == [rank - 1]
    )


def _const(graph: Graph, op: Op, other: int) -> np.ndarray | None:
    """The constant operand of binary `op` whose other operand is `other`."""
    if len(op.inputs) != 2 or other not in op.inputs:
        return None
    t = graph.tensors[op.inputs[1] if op.inputs[0] == other else op.inputs[0]]
    return t.data if t.is_constant else None


def _only_reader(graph: Graph, readers: dict, tensor: int, op_type: str) -> int | None:
    found = [r for r in readers.get(tensor, []) if graph.ops[r].type == op_type]
    return found[0] if len(found) == 1 else None


def _core(graph: Graph, i: int, readers: dict) -> dict | str | None:
    """The matched core from MEAN op #i: op indices, x, m, r or g, eps, gamma."""
    ops, mean = graph.ops, graph.ops[i]
    if not _last_axis_mean(graph, mean) or graph.tensors[mean.inputs[0]].is_constant:
        return None
    x, m = mean.inputs[0], mean.outputs[0]
    sq = _only_reader(graph, readers, m, "SQUARED_DIFFERENCE")
    if sq is None or set(ops[sq].inputs) != {x, m}:
        return None
    var = _only_reader(graph, readers, ops[sq].outputs[0], "MEAN")
    if var is None or not _last_axis_mean(graph, ops[var]):
        return "no variance MEAN"
    add = _only_reader(graph, readers, ops[var].outputs[0], "ADD")
    eps = _const(graph, ops[add], ops[var].outputs[0]) if add is not None else None
    if eps is None or eps.size != 1 or not float(eps.reshape(-1)[0]) > 0:
        return "no ADD of a positive scalar epsilon"
    rs = _only_reader(graph, readers, ops[add].outputs[0], "RSQRT")
    if rs is None:
        return "no RSQRT"
    core = {"ops": [i, sq, var, add, rs], "x": x, "m": m, "scale": ops[rs].outputs[0],
            "eps": float(eps.reshape(-1)[0]), "gamma": None}  # fmt: skip
    channels = graph.tensors[x].shape[-1]
    mul = _only_reader(graph, readers, core["scale"], "MUL")
    gamma = _const(graph, ops[mul], core["scale"]) if mul is not None else None
    if gamma is not None and gamma.size == channels and gamma.shape[-1] == channels:
        core["ops"].append(mul)
        core["scale"], core["gamma"] = ops[mul].outputs[0], gamma.reshape(channels)
    return core


def _tail(graph: Graph, core: dict) -> list[int]:
    """Ops after the core reading only x, constants and region tensors (in order)."""
    made = {graph.ops[k].outputs[0] for k in core["ops"]}
    tail = []
    for k in range(core["ops"][0] + 1, len(graph.ops)):  # a NEG(m) may come before RSQRT
        op = graph.ops[k]
        if k in core["ops"]:
            continue
        ins = [t for t in op.inputs if t >= 0 and not graph.tensors[t].is_constant]
        if op.type in TAIL and ins and any(t in made for t in ins):
            if all(t in made or t == core["x"] for t in ins) and len(op.outputs) == 1:
                tail.append(k)
                made.add(op.outputs[0])
    return tail


def _region(graph: Graph, core: dict, tail: list[int], y: int) -> list[int]:
    """Core ops plus the tail ops y depends on, in graph order."""
    needed, keep = {y}, []
    for k in reversed(tail):
        op = graph.ops[k]
        if op.outputs[0] in needed:
            keep.append(k)
            needed.update(op.inputs)
    return sorted(core["ops"] + keep)


def _closed(graph: Graph, region: list[int], y: int, readers: dict) -> bool:
    inside = set(region)
    for k in region:
        t = graph.ops[k].outputs[0]
        if t == y:
            continue
        if t in graph.outputs or any(r not in inside for r in readers.get(t, [])):
            return False
    return True


def _beta_if_layer_norm(graph: Graph, core: dict, region: list[int], y: int):
    """beta (per channel) when the region computes a LayerNorm of x, else None."""
    x = graph.tensors[core["x"]]
    if graph.tensors[y].shape != x.shape:
        return None
    sub = compact(Graph(graph.tensors, [graph.ops[k] for k in region], [core["x"]], [y]))
    run = Interpreter(sub, np.float64)
    beta = next(iter(run.run([np.zeros(x.shape, np.float32)]).values()))
    beta = beta.reshape(-1, x.shape[-1])
    if not np.allclose(beta, beta[0], rtol=0, atol=0):
        return None
    beta = beta[0]
    probe = np.random.default_rng(0).normal(0.5, 2.0, x.shape).astype(np.float32)
    got = next(iter(run.run([probe]).values()))
    v = probe.astype(np.float64)
    d = v - v.mean(-1, keepdims=True)
    gamma = core["gamma"] if core["gamma"] is not None else 1.0
    want = d / np.sqrt((d * d).mean(-1, keepdims=True) + core["eps"]) * gamma + beta
    err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
    return beta if err <= TOLERANCE else None


def fuse_layer_norm(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("fuse_layer_norm")
    i = 0
    while i < len(graph.ops):
        if graph.ops[i].type != "MEAN":  # only a MEAN starts a core (_core)
            i += 1
            continue
        readers = graph.consumers()
        core = _core(graph, i, readers)
        if not isinstance(core, dict):
            if core:
                result.declined.append(f"#{i} MEAN: {core}")
            i += 1
            continue
        fused = None
        tail = _tail(graph, core)
        for y in reversed([graph.ops[k].outputs[0] for k in tail]):
            region = _region(graph, core, tail, y)
            if not _closed(graph, region, y, readers):
                continue
            beta = _beta_if_layer_norm(graph, core, region, y)
            if beta is not None:
                fused = _replace(graph, core, region, y, beta)
                break
        if fused is None:
            result.declined.append(f"#{i} MEAN: no closed tail computing (x - m) * g + beta")
            i += 1
            continue
        graph = fused
        result.applied += 1
    return graph, result


def _replace(graph: Graph, core: dict, region: list[int], y: int, beta: np.ndarray) -> Graph:
    tensors = list(graph.tensors)
    base = tensors[y].name
    ids = []
    for what, value in (("gamma", core["gamma"]), ("beta", beta)):
        if value is None or (what == "beta" and not np.any(value)):
            ids.append(-1)
            continue
        tensors.append(Tensor(f"{base}/{what}", value.shape, "float32", value.astype(np.float32)))
        ids.append(len(tensors) - 1)
    op = Op("LAYER_NORM", (core["x"], *ids), (y,), {"epsilon": core["eps"]})
    last = region[-1]
    ops = [op if k == last else o for k, o in enumerate(graph.ops) if k == last or k not in region]
    return Graph(tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)
