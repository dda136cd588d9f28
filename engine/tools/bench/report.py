"""engine-bench results -> markdown tables and a JSON document.

A result is a dict per model: {"model", "path", "op_count", "flops", "engine": row,
"peers": [row, ...]}; a row has "backend", "status" ("ok", "skipped", "failed") and,
when ok, "time_ms" (mean/median/min/p90/max). Numpy outputs kept on rows for the
cross-check are dropped from the JSON.
"""

from __future__ import annotations

import json

import numpy as np

DASH = "—"


def _ms(v) -> str:
    if v is None:
        return DASH
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def table(header: list[str], rows: list[list], align: str = "") -> list[str]:
    """A markdown table's lines: the header, the rule, a line per row (cells as str, a "|"
    in one written "/"). `align`: a letter per column, "l" or "r" (numbers); left where
    it is shorter than the header."""
    rule = ["---:" if a == "r" else "---" for a in align.ljust(len(header), "l")]
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "/") for c in r) + " |" for r in rows]
    return out


def _backend_label(row: dict) -> str:
    b = row["backend"]
    if b == "engine":
        kind = row.get("storage")
        where = f", {kind}" if kind else ""
        return f"engine ({row.get('precision', '?')}, {row.get('sync', '?')}{where})"
    if row.get("threads") is not None and b.startswith("litert"):
        return f"{b} t={row['threads']}"
    return b


def latency_rows(results: list[dict]) -> list[list[str]]:
    rows = []
    for res in results:
        eng = res["engine"]
        eng_median = eng["time_ms"]["median"] if eng.get("status") == "ok" else None
        for row in [eng, *res["peers"]]:
            label = _backend_label(row)
            if row.get("status") != "ok":
                rows.append(
                    [res["model"], label]
                    + [DASH] * 7
                    + [f"{row['status']}: {row.get('reason', '')}"]
                )
                continue
            t = row["time_ms"]
            ratio = f"{t['median'] / eng_median:.2f}" if eng_median else DASH
            gflops = res["flops"] / (t["median"] * 1e6) if t["median"] > 0 else None
            if row is eng:
                ops = f"{eng['dispatch_count']}/{eng['op_count']} ({eng['dispatches_per_op']:.2f})"
                n = len(eng["fallback_ops"])
                note = f"{n} op(s) on CPU fallback" if n else "all ops on GPU"
            else:
                ops, note = DASH, row.get("note", "")
            if res.get("load", {}).get("busy"):
                note = f"{note}; busy (load {res['load']['load_before'][0]:.2f})".lstrip("; ")
            rows.append(
                [
                    res["model"],
                    label,
                    _ms(t["mean"]),
                    _ms(t["median"]),
                    _ms(t["p90"]),
                    _ms(t["min"]),
                    ratio,
                    f"{gflops:.2f}" if gflops is not None else DASH,
                    ops,
                    note,
                ]
            )
    return rows


LATENCY_HEADER = [
    "model",
    "backend",
    "mean ms",
    "median ms",
    "p90 ms",
    "min ms",
    "× engine",
    "GFLOP/s",
    "dispatches/ops",
    "note",
]


def _phase_columns(init: dict) -> tuple[list[str], list[str]]:
    """Engine.init_ms phases mapped onto the fixed init columns (+ footnotes)."""
    phases = dict(init["engine_phases_ms"])
    notes = []

    def take(*needles):
        keys = [k for k in phases if any(n in k.lower() for n in needles)]
        return keys, (sum(phases.pop(k) for k in keys) if keys else None)

    t_keys, transforms = take("transform")
    k_keys, kernels = take("kernel", "codegen")
    p_keys, pipelines = take("pipeline", "shader")
    w_keys, weights = take("weight", "upload", "const")
    cols = []
    if transforms is None:
        cols.append(_ms(init["unattributed_ms"]) + "*")
        notes.append(
            "\\* transforms are not timed by the engine: Engine() time minus engine.init_ms "
            "phases (transforms + untimed setup)"
        )
    else:
        cols.append(_ms(transforms))
    cols.append(_ms(kernels))
    cols.append(_ms(pipelines))
    if weights is None and any(("buffer" in k or "weight" in k) for k in p_keys):
        cols.append(f"in {', '.join(p_keys)}")
        notes.append(
            f"the engine times {', '.join(p_keys)} as one phase: shader+pipeline creation "
            "and weight upload are not split"
        )
    else:
        cols.append(_ms(weights))
    cols.append(_ms(sum(phases.values())) if phases else DASH)
    if phases:
        notes.append(f"other = {' + '.join(phases)} (engine.init_ms)")
    return cols, notes


INIT_HEADER = [
    "model",
    "import",
    "device",
    "transforms",
    "kernel build",
    "shaders+pipelines",
    "weight upload",
    "other",
    "first run",
    "total",
]


def init_rows(results: list[dict]) -> tuple[list[list[str]], list[str]]:
    rows, notes = [], []
    for res in results:
        eng = res["engine"]
        if eng.get("status") != "ok":
            continue
        init = eng["init"]
        cols, n = _phase_columns(init)
        notes += [x for x in n if x not in notes]
        rows.append(
            [res["model"], _ms(init["import_ms"]), _ms(init["device_ms"]), *cols]
            + [_ms(init["first_run_ms"]), _ms(init["total_ms"])]
        )
    return rows, notes


RUN_HEADER = [
    "model",
    "dispatches/run",
    "submits",
    "uploads",
    "readbacks",
    "encode ms",
    "wait ms",
    "wait CPU ms",
    "process CPU ms/run",
    "resident median ms",
    "max err vs LiteRT",
]


def run_rows(results: list[dict]) -> list[list[str]]:
    rows = []
    for res in results:
        eng = res["engine"]
        if eng.get("status") != "ok":
            continue
        p = eng["per_run"]
        err = eng.get("max_error_vs_litert")
        rows.append(
            [
                res["model"],
                f"{p['dispatches']:.0f}",
                f"{p['submits']:.0f}",
                f"{p['uploads']:.0f}",
                f"{p['readbacks']:.0f}",
                _ms(p["encode_ms"]),
                _ms(p["wait_ms"]),
                _ms(p["wait_cpu_ms"]),
                _ms(eng["cpu_ms_per_run"]),
                _ms(eng["resident"]["time_ms"]["median"])
                if eng["resident"].get("available")
                else DASH,
                f"{err:.2e}" if err is not None else DASH,
            ]
        )
    return rows


AB_HEADER = ["model", "peer", "engine median ms", "peer median ms", "peer / engine",
             "per round (min / median / max)", "engine init ms", "peer init ms",
             "max err vs engine", "load"]  # fmt: skip


def ab_table(results: list[dict]) -> list[list[str]]:
    rows = []
    for res in results:
        load = res.get("load", {})
        state = (f"{load['load_before'][0]:.2f}" + (" busy" if load.get("busy") else "")
                 if load else DASH)  # fmt: skip
        for r in res.get("ab", []):
            lo, mid, hi = r["ratio_rounds"]
            err = r["max_error"]
            rows.append([res["model"], r["peer"], _ms(r["engine_median_ms"]),
                         _ms(r["peer_median_ms"]), f"{r['ratio']:.2f}",
                         f"{lo:.2f} / {mid:.2f} / {hi:.2f}", _ms(r["engine_init_ms"]),
                         _ms(r["peer_init_ms"]), f"{err:.2e}" if err is not None else DASH,
                         state])  # fmt: skip
    return rows


def markdown(results: list[dict], machine: dict, settings: dict) -> str:
    """The whole report as markdown; the first table is the one printed by default."""
    v = machine.get("versions", {})
    lines = [
        f"adapter: {machine.get('adapter', '?')} | CPU: {machine.get('cpu')} "
        f"({machine.get('usable_cpus')} usable of {machine.get('cpu_count')}) | "
        f"python {machine.get('python')}, wgpu {v.get('wgpu')}, ai-edge-litert {v.get('ai-edge-litert')}",
        f"runs: {settings['runs']} timed after {settings['warmup']} warm-up | "
        f"precision {settings['precision']} | sync {settings['sync']} | "
        f"storage {settings.get('storage', 'auto')} | "
        f"transforms {'on' if settings['transforms'] else 'off'}",
        "",
        *table(LATENCY_HEADER, latency_rows(results)),
    ]
    ab = ab_table(results)
    if ab:
        lines += ["", "Interleaved A/B (same process, alternating rounds; ratio = peer / engine "
                  "median, > 1: the engine is faster):", "", *table(AB_HEADER, ab)]  # fmt: skip
        loads = [res["load"] for res in results if "load" in res]
        if loads:
            lines.append("")
            lines.append("load (1-min, before -> after each model): " + ", ".join(
                f"{ld['load_before'][0]:.2f} -> {ld['load_after'][0]:.2f}" for ld in loads)
                + f" on {loads[0]['cpus']} CPUs")  # fmt: skip
    init, notes = init_rows(results)
    if init:
        lines += ["", "Init (ms):", "", *table(INIT_HEADER, init)]
        lines += [""] + [f"- {n}" for n in notes] if notes else []
    runs = run_rows(results)
    if runs:
        lines += ["", "Engine per run (means over the timed runs):", "", *table(RUN_HEADER, runs)]
    for res in results:
        eng = res["engine"]
        if eng.get("status") != "ok":
            continue
        gpu = eng["gpu_time"]
        lines += ["", f"GPU time per op, {res['model']} (timestamp queries):"]
        if not gpu.get("available"):
            lines.append(f"not available: {gpu.get('reason')}")
        else:
            lines += [
                f"sum over dispatches {_ms(gpu['total_gpu_ms'])} ms; top {len(gpu['top'])} ops "
                "(op # in the graph after transforms):",
                "",
            ]
            lines += table(
                ["op", "type", "kernel", "dispatches", "GPU ms"],
                [
                    [
                        f"#{r['op_index']}",
                        r["op_type"],
                        r.get("kernel", ""),
                        r["dispatches"],
                        _ms(r["gpu_ms"]),
                    ]
                    for r in gpu["top"]
                ],
            )
        if eng["fallback_ops"]:
            lines.append(
                f"CPU fallback ops ({len(eng['fallback_ops'])}): {', '.join(eng['fallback_ops'])}"
            )
    return "\n".join(lines) + "\n"


def _plain(obj):
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items() if k != "outputs" and not k.startswith("_")}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def to_json(results: list[dict], machine: dict, settings: dict) -> str:
    """Everything measured, machine and settings included, without numpy outputs."""
    doc = {
        "machine": machine,
        "settings": settings,
        "models": results,
        "table": {"header": LATENCY_HEADER, "rows": latency_rows(results)},
    }
    return json.dumps(_plain(doc), indent=2)
