"""Do two measurements of the same cells agree? Per statistic, the share within ±5% / ±10%.

The label a predictor fits must repeat: a cell measured twice (`engine-latency measure
--repeat FIRST --out SECOND`) should get the same label. For each statistic a row keeps
(engine_{min,p10,median,mean}_ms), the share of cells whose second value is within ±tol
of the first; the statistic with the highest share is the best label on that machine.

    agreement(first_rows, second_rows)   # {"median": {"n": 60, "acc5": 0.4, "acc10": 0.7}, ...}
    print(markdown(agreement(...)))
"""

from __future__ import annotations

STATS = ("min", "p10", "median", "mean")  # measure.py's per-cell statistics
TOLS = (0.05, 0.10)
# The default label (fit, report): the statistic that repeats best on a quiet machine, which
# the targets are about: the median (55-67% of 60 cells within ±10% in three quiet pairs,
# the mean alike, p10 42-52%); p10 repeated best only on a busy one (docs/latency.md
# "Repeatable labels").
LABEL = "median"


def agrees(a: float, b: float, tol: float) -> bool:
    """`b` within ±tol of `a` (relative to the first measurement, `a`)."""
    return abs(b - a) <= tol * a


def agreement(first: list[dict], second: list[dict], stats=STATS, tols=TOLS) -> dict:
    """Per statistic: cells in both (same hash and precision) with the value in both, and
    the share of them that agree within each tolerance (acc5, acc10)."""
    out = {}
    for stat in stats:
        col = f"engine_{stat}_ms"
        a = {(r["hash"], r["precision"]): r.get(col) for r in first}
        pairs = [(a[k], r[col]) for r in second
                 if (k := (r["hash"], r["precision"])) in a and a[k] and r.get(col)]  # fmt: skip
        if pairs:
            out[stat] = {"n": len(pairs), **{f"acc{round(t * 100)}": sum(agrees(x, y, t)
                         for x, y in pairs) / len(pairs) for t in tols}}  # fmt: skip
    return out


def best(agree: dict, tol: float = 0.10) -> str:
    """The statistic that agrees most often within `tol` (ties: the tighter tolerance,
    then STATS order)."""
    key = f"acc{round(tol * 100)}"
    return max(agree, key=lambda s: (agree[s][key], agree[s].get("acc5", 0), -STATS.index(s)))


def markdown(agree: dict) -> str:
    lines = ["| statistic | cells | within ±5% | within ±10% |", "|---|---:|---:|---:|"]
    for stat, a in agree.items():
        lines.append(f"| {stat} | {a['n']} | {100 * a['acc5']:.1f}% | {100 * a['acc10']:.1f}% |")
    return "\n".join(lines)
