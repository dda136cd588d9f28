"""Per-frame records and their summary: latency percentiles per stage, FPS, transfers.

- input: one `FrameRecord` per frame from the pipeline (CPU ms per stage, GPU ms per stage
  from timestamps, wait wall/CPU ms, capture -> done latency)
- output: `summary()` (a dict, also the --stats JSON) and `format_summary()` (a table)
- usage: `tl = Timeline(); tl.add(record); print(format_summary(tl.summary(extra)))`
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

STAGES = ("upload", "preprocess", "inference", "postprocess", "render", "hud", "submit",
          "wait", "readback", "results", "encode")  # fmt: skip


@dataclass
class FrameRecord:
    index: int
    t_capture: float
    sync: str = "sleep"
    cpu_ms: dict[str, float] = field(default_factory=dict)  # CPU time spent per stage
    gpu_ms: dict[str, float] = field(default_factory=dict)  # GPU time per stage (timestamps)
    wait_ms: float = 0.0  # wall time waiting for the GPU
    wait_cpu_ms: float = 0.0  # CPU time the frame's thread burned waiting (spin >> sleep)
    frame_cpu_ms: float = 0.0  # CPU time of the frame's thread for the whole frame
    t_done: float = 0.0  # GPU done (live: presented right after; headless: after encoding)
    image: object = None  # headless: the rendered frame (BGRA), dropped once written

    @property
    def latency_ms(self) -> float:
        return (self.t_done - self.t_capture) * 1e3


def percentiles(values) -> dict[str, float]:
    a = np.asarray(list(values), np.float64)
    if a.size == 0:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "mean": 0.0}
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99), "mean": float(a.mean())}


class Timeline:
    """All records of a run (and a short window of recent ones for the HUD)."""

    def __init__(self, recent: int = 300):
        self.records: list[FrameRecord] = []
        self.recent: deque[FrameRecord] = deque(maxlen=recent)
        self.t_start = time.perf_counter()
        self.warmup = 0  # records before this index are left out of the summary
        self.dropped = 0  # video frames skipped to keep real time (window pacing)
        self.startup: dict[str, float] = {}  # seconds since launch: first content, first frame
        # extra summary sections: name -> fn() returning a dict (or None: left out)
        self.sections: dict[str, Callable[[], dict | None]] = {}

    def add(self, rec: FrameRecord) -> None:
        self.records.append(rec)
        self.recent.append(rec)

    def fps(self, last_s: float = 2.0) -> float:
        """Frames per second over the last `last_s` seconds."""
        if len(self.recent) < 2:
            return 0.0
        now = self.recent[-1].t_done
        times = [r.t_done for r in self.recent if now - r.t_done <= last_s]
        return (
            (len(times) - 1) / (times[-1] - times[0])
            if len(times) > 1 and times[-1] > times[0]
            else 0.0
        )

    def by_sync(self, last: int | None = None) -> dict[str, dict[str, float]]:
        """p50 wait ms, wait CPU ms, frame CPU ms and latency per sync mode over the recent
        frames (the last `last` of them): medians, so one cold frame does not show."""
        recent = list(self.recent)[-last:] if last else list(self.recent)
        out = {}
        for mode in ("sleep", "spin"):
            rs = [r for r in recent if r.sync == mode]
            if rs:
                out[mode] = {
                    "frames": len(rs),
                    "wait_ms": float(np.median([r.wait_ms for r in rs])),
                    "wait_cpu_ms": float(np.median([r.wait_cpu_ms for r in rs])),
                    "frame_cpu_ms": float(np.median([r.frame_cpu_ms for r in rs])),
                    "latency_ms": float(np.median([r.latency_ms for r in rs])),
                }
        return out

    def summary(self, extra: dict | None = None) -> dict:
        rs = self.records[self.warmup :] or self.records
        wall = (rs[-1].t_done - rs[0].t_capture) if rs else 0.0
        cpu_stages = sorted({k for r in rs for k in r.cpu_ms}, key=_stage_order)
        gpu_stages = sorted({k for r in rs for k in r.gpu_ms}, key=_stage_order)
        out = {
            "frames": len(self.records),
            "frames_measured": len(rs),
            "warmup_frames": len(self.records) - len(rs),
            "wall_s": wall,
            "fps": (len(rs) / wall) if wall > 0 else 0.0,
            "latency_ms": percentiles(r.latency_ms for r in rs),
            "wait_ms": percentiles(r.wait_ms for r in rs),
            "wait_cpu_ms": percentiles(r.wait_cpu_ms for r in rs),
            "frame_cpu_ms": percentiles(r.frame_cpu_ms for r in rs),
            "cpu_ms": {k: percentiles(r.cpu_ms.get(k, 0.0) for r in rs) for k in cpu_stages},
            "gpu_ms": {k: percentiles(r.gpu_ms.get(k, 0.0) for r in rs) for k in gpu_stages},
            "by_sync": {m: v for m, v in _by_sync(rs).items()},
            "dropped_frames": self.dropped,
        }
        if self.startup:
            out["startup_s"] = dict(self.startup)
        for name, fn in self.sections.items():
            value = fn()
            if value is not None:
                out[name] = value
        out.update(extra or {})
        return out


def _by_sync(rs: list[FrameRecord]) -> dict:
    out = {}
    for mode in ("sleep", "spin"):
        sel = [r for r in rs if r.sync == mode]
        if sel:
            out[mode] = {
                "frames": len(sel),
                "latency_ms": percentiles(r.latency_ms for r in sel),
                "wait_ms": percentiles(r.wait_ms for r in sel)["mean"],
                "wait_cpu_ms": percentiles(r.wait_cpu_ms for r in sel)["mean"],
                "frame_cpu_ms": percentiles(r.frame_cpu_ms for r in sel)["mean"],
            }
    return out


def _stage_order(name: str) -> int:
    return STAGES.index(name) if name in STAGES else len(STAGES)


def format_summary(s: dict) -> str:
    """A plain-text table of a summary()."""
    lines = []
    head = s.get("title")
    if head:
        lines.append(head)
    lines.append(
        f"frames {s['frames']} ({s['frames_measured']} measured after {s['warmup_frames']} "
        f"warm-up), {s['fps']:.1f} FPS, wall {s['wall_s']:.2f} s"
    )
    if s.get("dropped_frames"):
        lines.append(f"dropped {s['dropped_frames']} video frames to keep real time")
    st = s.get("startup_s")
    if st:
        lines.append(
            "start-up (s since launch): "
            + ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in st.items())
        )
    lat = s["latency_ms"]
    lines.append(f"capture -> output latency ms: p50 {lat['p50']:.1f}  p90 {lat['p90']:.1f}  "
                 f"p99 {lat['p99']:.1f}")  # fmt: skip
    lines.append("")
    lines.append(f"{'stage':<12} {'CPU p50':>8} {'p90':>7} {'p99':>7}   {'GPU p50':>8} "
                 f"{'p90':>7} {'p99':>7}  (ms)")  # fmt: skip
    stages = sorted(set(s["cpu_ms"]) | set(s["gpu_ms"]), key=_stage_order)
    for k in stages:
        c = s["cpu_ms"].get(k)
        g = s["gpu_ms"].get(k)
        cpu = (
            f"{c['p50']:8.2f} {c['p90']:7.2f} {c['p99']:7.2f}" if c else f"{'-':>8} {'':>7} {'':>7}"
        )
        gpu = f"{g['p50']:8.2f} {g['p90']:7.2f} {g['p99']:7.2f}" if g else f"{'-':>8}"
        lines.append(f"{k:<12} {cpu}   {gpu}")
    w, wc = s["wait_ms"], s["wait_cpu_ms"]
    lines.append(f"{'wait (wall)':<12} {w['p50']:8.2f} {w['p90']:7.2f} {w['p99']:7.2f}   "
                 f"CPU while waiting p50 {wc['p50']:.2f}")  # fmt: skip
    for mode, v in s.get("by_sync", {}).items():
        lines.append(f"sync {mode:<6} {v['frames']} frames: latency p50 {v['latency_ms']['p50']:.1f} ms, "
                     f"wait {v['wait_ms']:.2f} ms, CPU while waiting {v['wait_cpu_ms']:.2f} ms, "
                     f"CPU per frame {v['frame_cpu_ms']:.2f} ms")  # fmt: skip
    for m in s.get("models", []):
        mem = m["memory"]
        lines.append(f"model {m['name']}: {m['dispatches']} dispatches, {m['precision']}, memory "
                     f"{mem['strategy']} {mem['total_bytes']:,} B (naive {mem['naive_bytes']:,}, "
                     f"lower bound {mem['lower_bound']:,}, {mem['objects']} objects)")  # fmt: skip
    faces = s.get("faces")
    if faces and "frames_with_face" in faces:
        lines.append(f"frames with a face: {faces['frames_with_face']} of {faces['frames']} "
                     f"({faces['frames_without_face']} without)")  # fmt: skip
    if faces and "results_file" in faces:
        lines.append(f"results: {faces['results_frames']} frames -> {faces['results_file']}")
    for sw in s.get("switches", []):
        lines.append(f"switch {sw['what']}: {'done' if sw['ok'] else 'FAILED'} in "
                     f"{sw['seconds']:.1f} s, {sw['frames_meanwhile']} frames drawn meanwhile "
                     f"(longest gap {sw['longest_frame_gap_ms']:.0f} ms)")  # fmt: skip
    t = s.get("transfers")
    if t:
        lines.append("host transfers: " + ", ".join(f"{k} {v}" for k, v in t.items()))
    for f in s.get("failed_frames", []):
        lines.append(f"FAILED frame {f['index']}: {f['reason']}")
    return "\n".join(lines)
