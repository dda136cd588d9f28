"""Per-frame records and their summary: latency percentiles per stage, FPS, transfers.

- input: one `FrameRecord` per frame from the pipeline (CPU ms per stage, GPU ms per stage
  from timestamps, wait wall/CPU ms, capture -> done latency)
- output: `summary()` (a dict, also the --stats JSON) and `format_summary()` (a table)
- usage: `tl = Timeline(); tl.add(record); print(format_summary(tl.summary(extra)))`
"""

from __future__ import annotations

import random
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
    a = np.asarray(values if isinstance(values, np.ndarray) else list(values), np.float64)
    if a.size == 0:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "mean": 0.0}
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99), "mean": float(a.mean())}


HEAD = 16  # the first frames are always kept: the warm-up is cut from them
KEEP = 16_384  # then a uniform sample of this many frames (1.8 MB of float32 rows)
_FIXED = ("latency_ms", "wait_ms", "wait_cpu_ms", "frame_cpu_ms", "spin")


class Timeline:
    """A run's frames as compact rows, in bounded memory; the recent FrameRecords for the HUD.

    Every frame's figures go into a float32 row (latency, waits, CPU and GPU ms per stage).
    The first HEAD rows are kept as they are, then at most KEEP more: every frame while
    there is room, then a uniform random sample of all of them (reservoir sampling,
    seeded): percentiles over a run of any length from 1.8 MB, resident from the start. A
    list of FrameRecords grew ~2 KB per frame (1.5 MB/min at 13 FPS in the soak;
    docs/benchmarks.md)."""

    def __init__(self, recent: int = 300, keep: int = KEEP):
        self.recent: deque[FrameRecord] = deque(maxlen=recent)
        self.t_start = time.perf_counter()
        self.warmup = 0  # frames before this index are left out of the summary (<= HEAD)
        self.dropped = 0  # video frames skipped to keep real time (window pacing)
        self.startup: dict[str, float] = {}  # seconds since launch: first content, first frame
        # extra summary sections: name -> fn() returning a dict (or None: left out)
        self.sections: dict[str, Callable[[], dict | None]] = {}
        self.frames = 0
        self._keep = keep
        self._cols: dict[str, int] = {k: i for i, k in enumerate(_FIXED)}
        # written through now (np.full, not np.zeros): calloc's pages are mapped as the rows
        # first fill, so the heap rose 108 B a frame for the first KEEP frames (0.3 MB/min
        # at 50 FPS in the soak, benchmarks/app/soak.py: a bounded store that looked like
        # a leak for 5 minutes)
        self._rows = np.full((HEAD + keep, 2 * len(STAGES) + len(_FIXED)), 0.0, np.float32)
        self._stored = 0
        self._head_capture: list[float] = []  # t_capture of the head rows (wall time)
        self._last_done = 0.0
        self._rng = random.Random(0)

    def __len__(self) -> int:
        return self.frames

    @property
    def records(self) -> range:
        """The frames added so far (len and truth only; the rows themselves are compact)."""
        return range(self.frames)

    def add(self, rec: FrameRecord) -> None:
        self.recent.append(rec)
        slot = self._slot()
        self.frames += 1
        self._last_done = rec.t_done
        if len(self._head_capture) < HEAD:
            self._head_capture.append(rec.t_capture)
        if slot is None:
            return
        row = self._rows[slot]
        row[:] = 0.0
        row[:5] = (rec.latency_ms, rec.wait_ms, rec.wait_cpu_ms, rec.frame_cpu_ms,
                   rec.sync == "spin")  # fmt: skip
        for kind, values in (("cpu", rec.cpu_ms), ("gpu", rec.gpu_ms)):
            for stage, ms in values.items():
                row[self._col(f"{kind}:{stage}")] = ms

    def _slot(self) -> int | None:
        """Where the next frame's row goes (None: left out of the sample)."""
        k = self.frames - HEAD  # frames after the head, this one included
        if k < 0:
            self._stored += 1
            return self.frames
        if k < self._keep:
            self._stored += 1
            return self.frames
        j = self._rng.randrange(k + 1)
        return HEAD + j if j < self._keep else None

    def _col(self, name: str) -> int:
        if name not in self._cols:
            if len(self._cols) == self._rows.shape[1]:  # a stage name not in STAGES
                extra = np.zeros((self._rows.shape[0], 4), np.float32)
                self._rows = np.concatenate([self._rows, extra], axis=1)
            self._cols[name] = len(self._cols)
        return self._cols[name]

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
        warmup = min(self.warmup, HEAD, max(0, self.frames - 1))
        rows = self._rows[warmup : self._stored] if self._stored > warmup else self._rows[:0]
        measured = self.frames - warmup
        wall = (self._last_done - self._head_capture[warmup]) if measured > 0 else 0.0
        col = self._cols
        stages = {kind: sorted((k.split(":", 1)[1] for k in col if k.startswith(kind + ":")),
                               key=_stage_order) for kind in ("cpu", "gpu")}  # fmt: skip
        out = {
            "frames": self.frames,
            "frames_measured": measured,
            "warmup_frames": warmup,
            "frames_sampled": len(rows),  # < frames_measured: percentiles over a sample
            "wall_s": wall,
            "fps": (measured / wall) if wall > 0 else 0.0,
            "latency_ms": percentiles(rows[:, col["latency_ms"]]),
            "wait_ms": percentiles(rows[:, col["wait_ms"]]),
            "wait_cpu_ms": percentiles(rows[:, col["wait_cpu_ms"]]),
            "frame_cpu_ms": percentiles(rows[:, col["frame_cpu_ms"]]),
            "cpu_ms": {k: percentiles(rows[:, col[f"cpu:{k}"]]) for k in stages["cpu"]},
            "gpu_ms": {k: percentiles(rows[:, col[f"gpu:{k}"]]) for k in stages["gpu"]},
            "by_sync": _by_sync(rows, col),
            "dropped_frames": self.dropped,
        }
        if self.startup:
            out["startup_s"] = dict(self.startup)
        for name, fn in self.sections.items():
            try:
                value = fn()
            except Exception as exc:  # e.g. a GPU read-back on a lost device: the rest stands
                value = {"unavailable": f"{type(exc).__name__}: {str(exc).splitlines()[-1]}"}
            if value is not None:
                out[name] = value
        out.update(extra or {})
        return out


def _by_sync(rows: np.ndarray, col: dict[str, int]) -> dict:
    out = {}
    spin = rows[:, col["spin"]] > 0.5
    for mode, sel in (("sleep", rows[~spin]), ("spin", rows[spin])):
        if len(sel):
            out[mode] = {
                "frames": len(sel),
                "latency_ms": percentiles(sel[:, col["latency_ms"]]),
                "wait_ms": float(sel[:, col["wait_ms"]].mean()),
                "wait_cpu_ms": float(sel[:, col["wait_cpu_ms"]].mean()),
                "frame_cpu_ms": float(sel[:, col["frame_cpu_ms"]].mean()),
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
        if m.get("backend") == "xnnpack":
            lines.append(f"model {m['name']}: xnnpack (LiteRT), {m['threads']} threads")
            continue
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
