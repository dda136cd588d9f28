"""The per-layer look-up table: single-op models of every layer, measured alone.

A layer's key is its op type, the shapes it reads (inputs and constants), its output
shape and its attributes, taken from the imported graph (before fusion: the table
knows layers, not what the engine fuses them into). `measure_ops` rebuilds each
dataset cell's network, and for every key not measured yet writes a one-op graph
(the op with its constants; every other input a graph input) and times it on the
engine with the measurement protocol. The LUT predictor sums the table over a
model's layers (predictors/lut.py).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from pathlib import Path

from engine.model.builder import GraphBuilder
from engine.model.ir import Graph, Op

OPS_COLUMNS = ("key", "op_type", "mean_ms", "std_ms", "runs", "restarts", "adapter",
               "precision", "load_avg")  # fmt: skip


def ops_path(dataset: str | os.PathLike) -> Path:
    p = Path(dataset)
    return p.with_name(p.name.removesuffix(".csv.gz") + ".ops.csv.gz")


def layer_key(graph: Graph, op: Op) -> str:
    reads = [list(graph.tensors[t].shape) + (["c"] if graph.tensors[t].is_constant else [])
             for t in op.inputs if t >= 0]  # fmt: skip
    out = [list(graph.tensors[t].shape) for t in op.outputs]
    attrs = {k: v for k, v in sorted(op.attrs.items())}
    return json.dumps([op.type, reads, out, attrs], separators=(",", ":"), default=str)


def layer_keys(graph: Graph) -> list[str]:
    return [layer_key(graph, op) for op in graph.ops]


def layer_graph(graph: Graph, op: Op) -> Graph:
    """`op` alone: its constants copied, its other inputs graph inputs."""
    b = GraphBuilder(f"layer:{op.type}")
    ids = [-1 if t < 0 else b.add_tensor(graph.tensors[t]) for t in op.inputs]
    inputs = [i for i in ids if i >= 0 and not b.tensors[i].is_constant]
    outs = [b.add_tensor(graph.tensors[t]) for t in op.outputs]
    b.add_op(Op(op.type, tuple(ids), tuple(outs), dict(op.attrs), op.custom, op.custom_options))
    return b.graph(inputs, outs)


def read_table(path: str | os.PathLike) -> dict[str, float]:
    """key -> mean ms of a measured ops file ({} when missing)."""
    if not Path(path).exists():
        return {}
    with gzip.open(path, "rt", newline="") as f:
        return {r["key"]: float(r["mean_ms"]) for r in csv.DictReader(f)}


def measure_ops(dataset: Path, out: Path, ctx, precision: str, protocol, progress: bool) -> int:
    """Measure every layer of the dataset's cells not yet in `out`; returns rows written."""
    from tqdm import tqdm

    from engine.gpu.engine import Engine
    from engine.latency.builder import NetConfig, build_graph
    from engine.latency.cell import Cell
    from engine.latency.dataset import read_rows
    from engine.latency.dispatches import adapter_slug
    from engine.latency.measure import random_feeds, timed

    done = set(read_table(out))
    todo: dict[str, Graph] = {}
    for row in read_rows(dataset):
        if not row.get("adjacency"):
            continue
        g = build_graph(Cell.make(row["adjacency"], row["ops"]), NetConfig.from_dict(row["config"]))
        for op in g.ops:
            key = layer_key(g, op)
            if key not in done and key not in todo:
                todo[key] = layer_graph(g, op)
    rows = []
    for key, g in tqdm(todo.items(), unit="layer", disable=not progress):
        engine = Engine(g, context=ctx, precision=precision)
        feeds = random_feeds(g)
        t = timed(lambda e=engine, f=feeds: e.run(f), protocol)
        rows.append({"key": key, "op_type": g.ops[0].type, "mean_ms": round(t.mean_ms, 5),
                     "std_ms": round(t.std_ms, 5), "runs": t.runs, "restarts": t.restarts,
                     "adapter": adapter_slug(ctx.info), "precision": precision,
                     "load_avg": round(os.getloadavg()[0], 2)})  # fmt: skip
    if rows:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=OPS_COLUMNS)
        if not out.exists() or out.stat().st_size == 0:
            w.writeheader()
        w.writerows(rows)
        out.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(out, "at", newline="") as f:
            f.write(buf.getvalue())
    return len(rows)
