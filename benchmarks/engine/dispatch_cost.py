"""Fixed cost of one compute dispatch on an adapter: a chain of tiny dispatches.

    python -m benchmarks.engine.dispatch_cost [--adapter NAME] [--chains 1,50,200]
        [--groups 1,16] [--repeat 15] [--json cost.json]

One pipeline (each invocation adds 1 to one float), one bind group, N dispatches of
G work groups of 64 in one compute pass, one submit, one wait (engine.gpu.sync.Fence,
as run() waits). Per chain length the median wall time of --repeat
submits (after 3 warm-ups); per-dispatch cost = the slope between the shortest and the
longest chain, so the submit and the wait cancel out. Each dispatch depends on the one
before (same buffer), as a model's layers do: the driver must finish one before the
next starts. Prints a markdown table under the stamp (benchmarks/common.py); asserts
nothing.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common import Bench, interleave, table

SHADER = """@group(0) @binding(0) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { b[g.x] = b[g.x] + 1.0; }"""
WARMUP = 3


class Chain:
    """One adapter's pipeline, buffer and fence for chains of tiny dispatches."""

    def __init__(self, ctx, max_groups: int):
        import wgpu

        from engine.gpu.device import create_compute_pipeline
        from engine.gpu.sync import Fence

        dev = self.device = ctx.device
        usage = wgpu.BufferUsage
        self.pipeline = create_compute_pipeline(dev, SHADER, "dispatch_cost")
        self.data = dev.create_buffer(
            size=max_groups * 64 * 4, usage=usage.STORAGE | usage.COPY_SRC
        )
        self.bind_group = dev.create_bind_group(
            layout=self.pipeline.get_bind_group_layout(0),
            entries=[{"binding": 0, "resource": {"buffer": self.data}}],
        )
        self.fence = Fence(dev)  # how run() waits too

    def run(self, dispatches: int, groups: int) -> None:
        """One submit of `dispatches` dispatches of `groups` groups, waited for."""
        enc = self.device.create_command_encoder()
        pass_ = enc.begin_compute_pass()
        pass_.set_pipeline(self.pipeline)
        pass_.set_bind_group(0, self.bind_group)
        for _ in range(dispatches):
            pass_.dispatch_workgroups(groups)
        pass_.end()
        self.fence.signal(enc)
        self.device.queue.submit([enc.finish()])
        self.fence.wait("sleep")


def per_dispatch_ms(medians: dict[int, float]) -> float:
    """The slope of wall ms over chain length between the shortest and longest chain."""
    lo, hi = min(medians), max(medians)
    if hi == lo:
        raise ValueError("need at least two chain lengths")
    return (medians[hi] - medians[lo]) / (hi - lo)


def measure(ctx, chains: list[int], groups: list[int], repeat: int) -> list[dict]:
    """Rows per group count: median ms per chain length and the per-dispatch slope.
    Chain lengths are interleaved round by round (one submit each, the order reversed
    every other round), so a load change hits them alike."""
    chain = Chain(ctx, max(groups))
    rows = []
    for g in groups:
        runs = {n: lambda n=n, g=g: chain.run(n, g) for n in chains}
        medians = interleave(runs, rounds=repeat, block=1, warmup=WARMUP)["medians"]
        rows.append(
            {"groups": g, "median_ms": medians, "per_dispatch_ms": per_dispatch_ms(medians)}
        )
    return rows


def markdown(rows: list[dict]) -> str:
    chains = sorted(rows[0]["median_ms"])
    header = ["work groups per dispatch", *(f"{n} dispatches ms" for n in chains),
              "per dispatch ms"]  # fmt: skip
    cells = [[r["groups"], *(f"{r['median_ms'][n]:.3f}" for n in chains),
              f"{r['per_dispatch_ms']:.4f}"] for r in rows]  # fmt: skip
    return "\n".join(table(header, cells, "r" * len(header)))


def _ints(text: str) -> list[int]:
    values = [int(x) for x in text.split(",") if x.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: comma list of positive integers")
    return values


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--adapter", help="adapter name substring (else ENGINE_ADAPTER/best)")
    p.add_argument("--chains", type=_ints, default=[1, 50, 200], help="dispatches per submit")
    p.add_argument("--groups", type=_ints, default=[1, 16], help="work groups per dispatch")
    p.add_argument("--repeat", type=int, default=15, help="timed submits per chain length")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    if len(set(args.chains)) < 2:
        p.error("--chains needs at least two different lengths")
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    from engine.errors import EngineError
    from engine.gpu.device import shared_context

    try:
        ctx = shared_context(args.adapter)
    except EngineError as exc:
        print(f"dispatch_cost: {exc}", file=sys.stderr)
        return 2
    bench = Bench(__spec__.name, argv)
    bench.use(ctx)
    rows = measure(ctx, sorted(set(args.chains)), args.groups, args.repeat)
    bench.report(markdown(rows), {"rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
