"""Two engines of the same model on one device: what the second one costs (weights, init).

    python -m benchmarks.engine.two_engines models/face_landmark.tflite [...] [--json out.json]

Per model: the first engine's init ms and the constant bytes it uploaded, then the second
engine's init ms and the bytes it added (the weights cache, engine/gpu/weights.py, should
make that 0), and whether both give bitwise-identical outputs. Init times are single cold
measurements in one process (pipelines are shared too, so the second engine also compiles
nothing): read them as ratios, not as absolute figures. The report carries the stamp
(benchmarks/common.py: command, commit, adapter, the load before and after).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import Bench, table, timed


def measure(path: Path) -> dict:
    from engine.gpu.device import GpuContext, shared_context
    from engine.gpu.engine import Engine
    from engine.model.importer import load_tflite

    shared = shared_context()
    ctx = GpuContext(shared.adapter, shared.device, shared.features, shared.limits)  # empty
    graph = load_tflite(path)
    rng = np.random.default_rng(0)
    feeds = {graph.tensors[t].name: rng.uniform(-1, 1, graph.tensors[t].shape).astype("f4")
             for t in graph.inputs}  # fmt: skip
    first, first_ms = timed(lambda: Engine(graph, context=ctx))
    held = ctx.weights.stats()
    second, second_ms = timed(lambda: Engine(graph, context=ctx))
    after = ctx.weights.stats()
    a, b = first.run(feeds), second.run(feeds)
    same = all(np.array_equal(a[k], b[k]) for k in a)
    first.close(), second.close()
    return {
        "model": path.stem,
        "first_init_ms": first_ms,
        "first_weight_bytes": held["bytes"],
        "weight_buffers": held["buffers"],
        "second_init_ms": second_ms,
        "second_added_bytes": after["bytes"] - held["bytes"],
        "second_uploads": after["misses"] - held["misses"],
        "identical_outputs": same,
    }


HEADER = ["model", "weights (1st engine)", "buffers", "2nd engine adds", "1st init ms",
          "2nd init ms", "outputs identical"]  # fmt: skip


def markdown(rows: list[dict]) -> str:
    cells = [[r["model"], f"{r['first_weight_bytes'] / 1e6:.2f} MB", r["weight_buffers"],
              f"{r['second_added_bytes']} B", f"{r['first_init_ms']:.0f}",
              f"{r['second_init_ms']:.0f}", "yes" if r["identical_outputs"] else "NO"]
             for r in rows]  # fmt: skip
    return "\n".join(table(HEADER, cells, "lrrrrrl"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.two_engines", description=__doc__)
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--json", type=Path, help="write the rows as JSON")
    a = p.parse_args(argv)
    missing = [m for m in a.models if not m.is_file()]
    if missing:
        print(f"two_engines: error: {missing[0]}: no such file", file=sys.stderr)
        return 2
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    bench.use(shared_context())  # each model's engines: a fresh context on its adapter
    rows = [measure(m) for m in a.models]
    bench.report(markdown(rows), {"rows": rows}, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
