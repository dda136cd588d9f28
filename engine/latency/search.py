"""Example: search cells for the lowest predicted latency within a FLOPs band.

The question LETI asks of FLOPs: among cells of about the same FLOPs (band x budget
<= FLOPs <= budget), which run fastest? The dispatch-level predictor scores a cell in
~50 ms without running it, so a search can look at thousands:
- "random": NAS-Bench-101's random sampler;
- "evolution": regularised evolution (Real et al., as in NAS-Bench-101's baselines):
  a population of 50, tournaments of 10, a child is its parent with one edge flipped
  or one op changed (kept when valid), the oldest dies.
Cells outside the band score infinity. The best `top` (and, for contrast, the slowest
in the band) are printed; `--measure` runs them on the engine to check the ranking.

    engine-latency search --flops 20e6 --budget 1000 --measure
"""

from __future__ import annotations

import collections
import math

import numpy as np

from engine.latency.builder import NetConfig, build_graph
from engine.latency.cell import OPS, Cell
from engine.latency.dispatches import AdapterProfile, dispatch_list
from engine.latency.features import flops
from engine.latency.predictors.base import Sample
from engine.latency.space import random_cell


class Scorer:
    """Predicted ms of a cell (cached by hash), inf outside the FLOPs band."""

    def __init__(self, predictor, config: NetConfig, lo: float, hi: float):
        self.p, self.config, self.lo, self.hi = predictor, config, lo, hi
        self.profile = AdapterProfile.from_dict(predictor.meta["profile"])
        self.seen: dict[str, tuple[float, int, Cell]] = {}

    def __call__(self, cell: Cell) -> float:
        h = cell.hash()
        if h not in self.seen:
            g = build_graph(cell, self.config)
            f = flops(g)
            ms = math.inf
            if self.lo <= f <= self.hi:
                rows = dispatch_list(g, self.profile)
                ms = self.p.predict(Sample(hash=h, flops=f, peak_memory=0, dispatches=rows))
            self.seen[h] = (ms, f, cell)
        return self.seen[h][0]


def mutate(cell: Cell, rng: np.random.Generator) -> Cell:
    """One edge flipped or one interior op changed; retried until valid (the bare
    input -> output cell has no valid mutation: a random cell replaces it)."""
    n = cell.vertices
    if n == 2:
        return random_cell(rng)
    for _ in range(100):
        m = [list(r) for r in cell.matrix]
        ops = list(cell.ops)
        if n > 2 and rng.random() < 0.5:
            v = int(rng.integers(1, n - 1))
            ops[v] = OPS[(OPS.index(ops[v]) + int(rng.integers(1, len(OPS)))) % len(OPS)]
        else:
            a = int(rng.integers(0, n - 1))
            b = int(rng.integers(a + 1, n))
            m[a][b] = 1 - m[a][b]
        child = Cell.make(m, ops)
        if child.is_valid():
            return child.pruned()
    return random_cell(rng)


def evolve(score: Scorer, budget: int, rng, population: int = 50, sample: int = 10) -> None:
    pop = collections.deque()
    while len(pop) < population and len(score.seen) < budget:
        c = random_cell(rng)
        pop.append((c, score(c)))
    while len(score.seen) < budget:
        picks = [pop[i] for i in rng.choice(len(pop), size=min(sample, len(pop)), replace=False)]
        parent = min(picks, key=lambda x: x[1])[0]
        child = mutate(parent, rng)
        pop.append((child, score(child)))
        pop.popleft()


def run_search(args) -> None:
    import json

    from engine.latency.predict import predictor_path
    from engine.latency.predictors import load

    p = load(args.predictor or predictor_path(None, "fp32"))
    config = NetConfig.from_dict(json.loads(args.config))
    score = Scorer(p, config, args.band * args.flops, args.flops)
    rng = np.random.default_rng(args.seed)
    tries = 0
    if args.method == "random":
        while len(score.seen) < args.budget and tries < 50 * args.budget:
            score(random_cell(rng))
            tries += 1
    else:
        evolve(score, args.budget, rng)
    ranked = sorted((v for v in score.seen.values() if math.isfinite(v[0])), key=lambda v: v[0])
    if not ranked:
        raise ValueError(
            f"no cell of {len(score.seen)} within FLOPs [{score.lo:.3g}, {score.hi:.3g}]"
        )
    picks = ranked[: args.top] + ranked[-1:]
    print(f"{len(score.seen)} cells scored, {len(ranked)} in the FLOPs band; "
          f"fastest {args.top} and the slowest:")  # fmt: skip
    measured = _measure([c for _, _, c in picks], config) if args.measure else {}
    print(f"{'hash':<34} {'MFLOPs':>8} {'predicted':>10} {'measured':>10}")
    for ms, f, c in picks:
        m = measured.get(c.hash())
        mtext = f"{m:.3f}" if m is not None else "-"
        print(f"{c.hash():<34} {f / 1e6:>8.2f} {ms:>10.3f} {mtext:>10}")


def _measure(cells: list[Cell], config: NetConfig) -> dict[str, float]:
    from engine.gpu.device import shared_context
    from engine.gpu.engine import Engine
    from engine.latency.measure import Protocol, random_feeds, timed

    ctx = shared_context()
    out = {}
    for c in cells:
        g = build_graph(c, config)
        e = Engine(g, context=ctx)
        feeds = random_feeds(g)
        out[c.hash()] = timed(lambda e=e, f=feeds: e.run(f), Protocol()).median_ms
    return out
