"""Memory plan benchmark: plan / lower bound and planning ms (prints tables; asserts nothing).

    python -m benchmarks.engine.memory_bench [--tensors 300] [--seed 0] [--alignment 256]
                                        [--models DIR] [--json OUT.json]

Tables:
- synthetic 300-tensor models (all built as graph IR, read back through usage_records):
  chain (op k reads tensor k-1, writes tensor k, MobileNet-like shapes), residual (plus
  a skip every 3 ops), unet (each encoder tensor read again by its mirror decoder op);
  every strategy, and `mincostflow` with every reuse edge;
- arena: every fetched model (DIR, default the engine's models folder; transforms
  applied, as the engine plans them) and the MobileNetV1/V2 and DeepLabV3 shaped graphs
  of memory_graphs.py, fp32 and fp16: the heuristic start and the exact search's plan
  over the lower bound, the search's nodes and the planning ms;
- textures, the same models with every intermediate a texture: whole shared textures
  (the better of texture_greedy and texture_greedy_by_size) and texture_arena (folded
  into layers), over the lower bound;
- the engine's plans (compile_graph, no GPU): storage "buffer" at fp32 and "texture" at
  fp16 (what storage "auto" picks on lavapipe for each), buffer + texture bytes over the
  lower bound of all intermediates (buffers and textures cannot share memory).
The tables print under the stamp line (benchmarks/common.py); no adapter is used.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from benchmarks.common import Bench, table, timed
from benchmarks.engine.memory_graphs import GRAPHS
from engine.memory.arena import arena
from engine.memory.arena_search import search
from engine.memory.mincostflow import mincostflow
from engine.memory.records import TensorUsage, lower_bound, usage_records
from engine.memory.summary import format_bytes, format_table, plan_all
from engine.memory.texture import texture_greedy, texture_greedy_by_size
from engine.memory.texture_arena import texture_arena
from engine.model.ir import Graph, Op, Tensor


def _shapes(n: int, rng: random.Random) -> list[tuple[int, int, int, int]]:
    """MobileNet-like shapes: resolution halves and channels grow every n/5 tensors."""
    shapes = []
    for k in range(n):
        stage = min(4, 5 * k // n)
        side = 128 >> stage
        channels = rng.choice([8, 16, 24, 32, 48]) << stage
        shapes.append((1, side, side, channels))
    return shapes


def synthetic_graph(kind: str, n: int = 300, seed: int = 0) -> Graph:
    """A graph with `n` intermediate tensors of the given kind (chain, residual, unet)."""
    rng = random.Random(seed)
    shapes = _shapes(n, rng)
    if kind == "unet":
        half = n // 2
        shapes = shapes[:half] + shapes[:half][::-1] + shapes[half : n - half]
    tensors = [Tensor("input", (1, 128, 128, 3), "float32")]
    tensors += [Tensor(f"t{k}", s, "float32") for k, s in enumerate(shapes)]
    tensors.append(Tensor("output", (1, 1, 1, 4), "float32"))
    ops = []
    for k in range(n + 1):  # op k writes tensor k + 1 (the last op writes the output)
        inputs = [k]
        if kind == "residual" and k >= 3:
            inputs.append(k - 2)
        if kind == "unet" and n // 2 < k <= 2 * (n // 2):
            inputs.append(2 * (n // 2) - k + 1)
        ops.append(Op("ADD" if len(inputs) > 1 else "CONV_2D", tuple(inputs), (k + 1,)))
    return Graph(tensors, ops, [0], [n + 1], name=f"synthetic-{kind}")


def _time_full_flow(records: list[TensorUsage]) -> str:
    plan, ms = timed(lambda: mincostflow(records, nearest=None))
    return f"mincostflow with every reuse edge: {format_bytes(plan.total_bytes)} in {ms:.0f} ms"


def _graphs(models: Path) -> dict[str, Graph]:
    """Fetched models (transformed as the engine runs them) and the shaped graphs."""
    from engine.model.importer import load_tflite
    from engine.transforms import run_all

    found = {p.stem: run_all(load_tflite(p)) for p in sorted(models.glob("*.tflite"))}
    return found | {name: build() for name, build in GRAPHS.items()}


def arena_row(name: str, precision: str, records: list[TensorUsage], alignment: int) -> dict:
    bound = lower_bound(records)
    start, start_ms = timed(lambda: arena(records, alignment, budget=0))
    (size, _, nodes), search_ms = timed(lambda: search(records, alignment, start.size))
    return {"model": name, "precision": precision, "tensors": len(records), "lower_bound": bound,
            "heuristic": start.size / bound, "arena": size / bound, "nodes": nodes,
            "ms": start_ms + search_ms}  # fmt: skip


def texture_row(name: str, precision: str, records: list[TensorUsage]) -> dict:
    bound = lower_bound(records)
    whole = min(texture_greedy(records).total_bytes, texture_greedy_by_size(records).total_bytes)
    plan, ms = timed(lambda: texture_arena(records))
    return {"model": name, "precision": precision, "lower_bound": bound, "whole": whole / bound,
            "texture_arena": plan.total_bytes / bound, "objects": plan.objects, "ms": ms}  # fmt: skip


def engine_row(name: str, graph: Graph, precision: str, storage: str) -> dict | None:
    """The engine's default plan for one storage kind (no GPU: compile only)."""
    from engine.errors import ModelError
    from engine.gpu.compile import CompileOptions, Target, compile_graph

    try:
        plans = compile_graph(graph, CompileOptions(precision, storage), Target()).plans
    except ModelError:
        return None  # an op with no kernel (e.g. a custom op of a newer MediaPipe)
    m, t = plans.memory, plans.textures
    return {"model": name, "precision": precision, "storage": storage,
            "strategy": m.strategy, "total": m.total_bytes, "lower_bound": m.lower_bound,
            "ratio": m.ratio, "buffers": plans.buffers.total_bytes,
            "textures": t.total_bytes if t else 0, "texture_bound": t.lower_bound if t else 0,
            "ms": m.time_ms}  # fmt: skip


def _md(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """Markdown table: (header, key, format) per column ("B": bytes; "s" left aligned)."""
    cells = [[format_bytes(r[k]) if f == "B" else format(r[k], f) for _, k, f in columns]
             for r in rows]  # fmt: skip
    align = "".join("l" if f == "s" else "r" for _, _, f in columns)
    return "\n".join(table([h for h, _, _ in columns], cells, align))


def model_tables(models: Path, alignment: int) -> dict[str, list[dict]]:
    tables: dict[str, list[dict]] = {"arena": [], "texture": [], "engine": []}
    for name, graph in _graphs(models).items():
        for precision, width in (("fp32", 4), ("fp16", 2)):
            records = usage_records(graph, bytes_per_element=width)
            tables["arena"].append(arena_row(name, precision, records, alignment))
            tables["texture"].append(texture_row(name, precision, records))
        if name not in GRAPHS:  # the shaped graphs have no weights to compile
            for precision, storage in (("fp32", "buffer"), ("fp16", "texture")):
                row = engine_row(name, graph, precision, storage)
                tables["engine"] += [row] if row else []
    return tables


ARENA_COLUMNS = [("model", "model", "s"), ("precision", "precision", "s"),
                 ("tensors", "tensors", "d"), ("lower bound", "lower_bound", "B"),
                 ("heuristic", "heuristic", ".4f"), ("arena", "arena", ".4f"),
                 ("nodes", "nodes", "d"), ("ms", "ms", ".1f")]  # fmt: skip
TEXTURE_COLUMNS = [("model", "model", "s"), ("precision", "precision", "s"),
                   ("lower bound", "lower_bound", "B"), ("whole textures", "whole", ".3f"),
                   ("texture_arena", "texture_arena", ".3f"), ("objects", "objects", "d"),
                   ("ms", "ms", ".1f")]  # fmt: skip
ENGINE_COLUMNS = [("model", "model", "s"), ("precision", "precision", "s"),
                  ("storage", "storage", "s"), ("plan", "strategy", "s"),
                  ("total", "total", "B"), ("buffers", "buffers", "B"),
                  ("textures", "textures", "B"), ("texture bound", "texture_bound", "B"),
                  ("lower bound", "lower_bound", "B"), ("/ bound", "ratio", ".3f"),
                  ("ms", "ms", ".1f")]  # fmt: skip


def model_markdown(tables: dict[str, list[dict]], alignment: int) -> str:
    """The arena, texture and engine tables of model_tables()."""
    return "\n".join([
        f"## arena (alignment {alignment}): plan / lower bound\n",
        _md(tables["arena"], ARENA_COLUMNS),
        "\n## textures, every intermediate a texture: plan / lower bound\n",
        _md(tables["texture"], TEXTURE_COLUMNS),
        "\n## the engine's default plans (buffers + textures) / lower bound\n",
        _md(tables["engine"], ENGINE_COLUMNS),
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    from engine.catalog.paths import models_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tensors", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alignment", type=int, default=256)
    parser.add_argument("--models", type=Path, default=None, help="folder of .tflite models")
    parser.add_argument("--json", type=Path, help="write every table's rows here")
    args = parser.parse_args(argv)
    bench = Bench(__spec__.name, argv)
    synthetic, lines = {}, []
    for kind in ("chain", "residual", "unet"):
        records = usage_records(synthetic_graph(kind, args.tensors, args.seed))
        stats = plan_all(records, args.alignment)
        synthetic[kind] = [s.as_dict() for s in stats]
        lines += [f"## {kind}: {len(records)} tensors\n", format_table(stats),
                  f"\n{_time_full_flow(records)}\n"]  # fmt: skip
    tables = model_tables(args.models or models_dir(), args.alignment)
    lines.append(model_markdown(tables, args.alignment))
    bench.report("\n".join(lines), {"synthetic": synthetic, **tables}, args.json)


if __name__ == "__main__":
    main()
