"""Interleaved A/B: the engine and a peer timed in alternating rounds in one process.

Timing the engine's runs, then the peer's, lets a neighbour's load land on one side
only (on the shared development machines that flipped results). Here each round runs
`block` inferences of each contender, the order alternating (A B, B A, ...), and the
medians are taken over all rounds' runs; the ratio peer / engine is also given per
round, so its spread shows how steady the machine was. Both sides run numpy in ->
outputs read back (the engine's run(), the peer's own run closure), and the outputs of
the last run are compared.

    ab = interleave({"engine": eng_run, "litert-gpu": peer_run}, rounds=10, block=5)
    ab["medians"]["engine"], ab["ratio"]   # ratio: median(peer) / median(engine)

Where a round is more than timed calls (a profile beside the run, a fresh process per
contender), `alternating(names, rounds)` gives the same order to the caller's own loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import numpy as np

from engine.tools.bench.peers import max_error
from engine.tools.bench.timing import timed

T = TypeVar("T")


def alternating(names: Iterable[T], rounds: int) -> Iterator[tuple[int, T]]:
    """(round, name) over `rounds` rounds of every name, the order reversed every other
    round (A B, B A, A B ...): a change in the machine's load lands on each name alike."""
    names = list(names)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            yield r, name


def interleave(runs: dict[str, Callable[[], object]], rounds: int, block: int,
               warmup: int = 0) -> dict:  # fmt: skip
    """Wall ms per run of every contender over `rounds` alternating rounds of `block`,
    after `warmup` untimed runs of each (contender after contender)."""
    names = list(runs)
    for name in names:
        for _ in range(warmup):
            runs[name]()
    samples: dict[str, list[float]] = {n: [] for n in names}
    per_round: dict[str, list[float]] = {n: [] for n in names}
    outputs: dict[str, object] = {}
    for _, name in alternating(names, rounds):
        times = []
        for _ in range(block):
            outputs[name], ms = timed(runs[name])
            times.append(ms)
        samples[name] += times
        per_round[name].append(float(np.median(times)))
    return {
        "rounds": rounds,
        "block": block,
        "medians": {n: float(np.median(s)) for n, s in samples.items()},
        "p90": {n: float(np.percentile(s, 90)) for n, s in samples.items()},
        "round_medians": per_round,
        "outputs": outputs,
    }


def match_outputs(ref: dict, got: dict) -> float | None:
    """max_error of `got` vs `ref` by name; by position when the names differ (LiteRT's
    CompiledModel names outputs by its signature) and the sizes agree."""
    err = max_error(ref, got)
    if err is not None or len(ref) != len(got):
        return err
    pairs = list(zip(ref.values(), got.values(), strict=True))
    if any(np.asarray(a).size != np.asarray(b).size for a, b in pairs):
        return None
    return max_error({str(i): a for i, (a, _) in enumerate(pairs)},
                     {str(i): b for i, (_, b) in enumerate(pairs)})  # fmt: skip


def ab_rows(engine_row: dict, peer_rows: list[dict], rounds: int, block: int) -> list[dict]:
    """One A/B row per peer row that kept a run closure (`_run`), against the engine row's
    `_run`: medians, ratio peer/engine (> 1: the engine is faster), ratio per round, init
    of both, max error of the peer's outputs vs the engine's."""
    eng_run = engine_row.get("_run")
    out = []
    for peer in peer_rows:
        run = peer.get("_run")
        if eng_run is None or run is None:
            continue
        label = peer["backend"] + (f" t={peer['threads']}" if peer.get("threads") else "")
        ab = interleave({"engine": eng_run, label: run}, rounds, block)
        eng_ms, peer_ms = ab["medians"]["engine"], ab["medians"][label]
        per_round = [p / e for p, e in zip(ab["round_medians"][label],
                                            ab["round_medians"]["engine"], strict=True)]  # fmt: skip
        out.append({
            "peer": label,
            "engine_median_ms": eng_ms,
            "peer_median_ms": peer_ms,
            "engine_p90_ms": ab["p90"]["engine"],
            "peer_p90_ms": ab["p90"][label],
            "ratio": peer_ms / eng_ms if eng_ms > 0 else None,
            "ratio_rounds": [min(per_round), float(np.median(per_round)), max(per_round)],
            "rounds": rounds,
            "block": block,
            "engine_init_ms": engine_row.get("init_ms"),
            "peer_init_ms": peer.get("init_ms"),
            "max_error": match_outputs(ab["outputs"]["engine"], ab["outputs"][label]),
        })  # fmt: skip
    return out
