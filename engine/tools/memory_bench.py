"""Planning-time benchmark on synthetic 300-tensor models (prints tables; asserts nothing).

    python -m engine.tools.memory_bench [--tensors 300] [--seed 0] [--alignment 256]

Models (all built as graph IR and read back through usage_records):
- chain: op k reads tensor k-1, writes tensor k (MobileNet-like shapes);
- residual: chain plus a skip every 3 ops (tensor k also read by op k+3);
- unet: encoder/decoder, each encoder tensor read again by its mirror decoder op.
"""

from __future__ import annotations

import argparse
import random
import time

from engine.memory.mincostflow import mincostflow
from engine.memory.records import TensorUsage, usage_records
from engine.memory.stats import format_bytes, format_table, plan_all
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
    start = time.perf_counter()
    total = mincostflow(records, nearest=None).total_bytes
    ms = 1e3 * (time.perf_counter() - start)
    return f"mincostflow with every reuse edge: {format_bytes(total)} in {ms:.0f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tensors", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alignment", type=int, default=256)
    args = parser.parse_args(argv)
    for kind in ("chain", "residual", "unet"):
        records = usage_records(synthetic_graph(kind, args.tensors, args.seed))
        print(f"## {kind}: {len(records)} tensors\n")
        print(format_table(plan_all(records, args.alignment)))
        print(f"\n{_time_full_flow(records)}\n")


if __name__ == "__main__":
    main()
