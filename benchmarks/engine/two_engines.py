"""Two engines of the same model on one device: what the second one costs (weights, init).

    python -m benchmarks.engine.two_engines models/face_landmark.tflite [...] [--json out.json]

Per model: the first engine's init ms and the constant bytes it uploaded, then the second
engine's init ms and the bytes it added (the weights cache, engine/gpu/weights.py, should
make that 0), and whether both give bitwise-identical outputs. Init times are single cold
measurements in one process (pipelines are shared too, so the second engine also compiles
nothing): read them as ratios, not as absolute figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


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
    t0 = time.perf_counter()
    first = Engine(graph, context=ctx)
    first_ms = (time.perf_counter() - t0) * 1e3
    held = ctx.weights.stats()
    t0 = time.perf_counter()
    second = Engine(graph, context=ctx)
    second_ms = (time.perf_counter() - t0) * 1e3
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
        "load_avg_1min": os.getloadavg()[0],
    }


def markdown(rows: list[dict]) -> str:
    head = ("| model | weights (1st engine) | buffers | 2nd engine adds | 1st init ms | "
            "2nd init ms | outputs identical |\n|---|---:|---:|---:|---:|---:|---|")  # fmt: skip
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['first_weight_bytes'] / 1e6:.2f} MB | {r['weight_buffers']} | "
            f"{r['second_added_bytes']} B | {r['first_init_ms']:.0f} | {r['second_init_ms']:.0f} "
            f"| {'yes' if r['identical_outputs'] else 'NO'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine.two_engines", description=__doc__)
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--json", type=Path, help="write the rows as JSON")
    a = p.parse_args(argv)
    missing = [m for m in a.models if not m.is_file()]
    if missing:
        print(f"two_engines: error: {missing[0]}: no such file", file=sys.stderr)
        return 2
    rows = [measure(m) for m in a.models]
    print(markdown(rows))
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
