"""Soak: each ar-demo effect for thousands of frames headless; memory and GPU objects over time.

    python -m benchmarks.app.soak [--frames 3000] [--effects all|face-mesh,hands,...]
                                [--every 100] [--input CLIP] [--json out/soak.json]
                                [--container mp4|mkv] [--trace 12] [--trim] [--smaps]

Per effect (and style), a child process runs the real headless path (app.headless
.run_headless: upload, solution, overlay, readback, mp4 encoding, the timeline) with the
manifest's models of the effect (`ar-demo --solution`'s, app/effects/__init__.py EFFECTS)
on a clip played in a loop until `--frames` (default: the sample clip for the face effects
and segmentation, the people clip for hands, pose and holistic: it has hands and bodies;
`--input` sets one for all), encoding into `--container` (mp4, ar-demo's default, whose
muxer keeps every frame's index entry in memory until the file is closed: ~70 B a frame,
benchmarks/app/writer_memory.py; mkv keeps one per cluster), and samples every `--every`
frames:
anonymous memory (RssAnon + VmSwap: the heap, where a leak lands; the target is on it),
glibc's count of the bytes allocated and not freed (mallinfo2, `malloc_used_mb`: what
the process keeps, without the free heap glibc keeps resident), RSS, wgpu-py's live
objects by type (wgpu.diagnostics.object_counts), the native wgpu-core registries' kept
objects (wgpu_native_counts), the GPU bytes of live buffers and textures, Python's
allocated blocks (sys.getallocatedblocks: growth there is Python objects, growth in
anonymous memory only is native) and the 1-minute load. The parent prints a markdown
table (memory start / end, slope in MB/min and KB/frame by least squares over the samples
after `--warmup` frames and over the second half of the run with its standard error, the
second half's slope of malloc'd bytes, object count growth, the load during the run, the
app's heap trims: app/heap.py HeapTrim) under the stamp line (benchmarks/common.py; the
adapter the children ran on) and writes the samples as JSON.
Target: a flat curve, second-half slope < 0.2 MB/min (a bounded store that is still
filling shows as a slope after warm-up; a leak shows in both). Anonymous memory moves by
+-1-2 MB from sample to sample (blocks in flight, the free heap faulted back in after a
trim): over a 15,000-frame run at 50 FPS that alone is +-0.2 MB/min of least-squares
slope, so read KB/frame and the malloc'd slope beside it.
Diagnosis: `--trace N` runs tracemalloc (N frames of traceback) in the child and lists the
allocations that grew most between the first sample after warm-up and the last, by
traceback (what Python holds on to); `--trim` calls glibc's malloc_trim(0) before each
sample, so freed heap that only fragmentation keeps resident does not count (a slope
that goes away with it is the allocator, not a leak; MALLOC_ARENA_MAX=2 in the
environment is the other check); `--smaps` splits anonymous memory by kind of mapping in
every sample (/proc/self/smaps: glibc's main heap, anonymous maps: glibc's thread arenas,
Python's 1 MiB arenas, the drivers' maps; stacks; libraries' copied pages) and lists the
mappings that grew most from the first sample after warm-up to the last.
The child writes each sample to a file as it takes it, so the soak's own records (a
few KB a sample) do not grow the heap it measures.
A child per effect: each starts from a fresh process, so one effect's memory is not
counted against the next.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.heap import anon_mb, malloc_mb, trim_heap
from benchmarks.common import Bench, adapter_record, table

CLIPS = {"hands": "people.mp4", "pose": "people.mp4", "holistic": "people.mp4"}  # else:
DEFAULT_CLIP = "sample.mp4"  # faces and a person, no hands in view
TARGET_MB_PER_MIN = 0.2  # the bound on anonymous memory's growth over the second half
SMAPS_KINDS = ("smaps_heap_mb", "smaps_mmap_mb", "smaps_stack_mb", "smaps_file_mb")
TRACE_TOP = 15  # tracemalloc: the allocation sites listed per effect


def effect_models(effect: str) -> list[str]:
    """The model files an effect runs: its manifest models, as `ar-demo --solution`."""
    from app.effects import effect_info
    from app.models import solution_models

    return solution_models(effect_info(effect).solution)


def default_input(effect: str) -> str:
    from engine.catalog.paths import assets_dir

    return str(assets_dir() / CLIPS.get(effect, DEFAULT_CLIP))


def rss_mb() -> float:
    """Resident set size of this process in MiB (Linux /proc; else the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def gpu_objects() -> dict:
    """Live wgpu objects: wgpu-py's wrappers by type, wgpu-core's kept objects, GPU bytes."""
    import wgpu

    counts = wgpu.diagnostics.object_counts.get_dict()
    out = {
        "py": {k: v["count"] for k, v in counts.items() if k != "total" and v["count"]},
        "py_total": counts["total"]["count"],
        "gpu_bytes": counts["total"].get("resource_mem", 0),
    }
    try:
        native = wgpu.diagnostics.wgpu_native_counts.get_dict()
        out["native_total"] = sum(v["count"] for v in native.values())
    except Exception:  # another backend, or a wgpu without the native report
        out["native_total"] = None
    return out


def anon_mappings() -> dict[str, dict]:
    """This process's mappings with anonymous pages (/proc/self/smaps), by start address:
    {start: {"name", "perms", "size_kb", "anon_kb"}}; {} where there is no /proc."""
    maps: dict[str, dict] = {}
    try:
        with open("/proc/self/smaps") as f:
            current = None
            for line in f:
                head = line.split(None, 5)
                if "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line
                    lo, hi = (int(x, 16) for x in head[0].split("-"))
                    name = head[5].strip() if len(head) > 5 else ""
                    current = {"name": name, "perms": head[1], "size_kb": (hi - lo) // 1024}
                    start = head[0].split("-")[0]
                elif head[0] == "Anonymous:" and current is not None and int(head[1]):
                    maps[start] = {**current, "anon_kb": int(head[1])}
    except OSError:
        return {}
    return maps


def mapping_kind(m: dict) -> str:
    """heap (glibc's main heap), stack, file (copy-on-write pages of a file: a library's
    data), mmap (anonymous maps: glibc's thread arenas and big blocks, Python's arenas,
    the drivers' own maps)."""
    name = m["name"]
    if name == "[heap]":
        return "heap"
    if name.startswith("[stack"):
        return "stack"
    return "mmap" if not name or name.startswith("[anon") else "file"


def anon_by_kind(maps: dict[str, dict]) -> dict:
    """Anonymous MB by kind of mapping (mapping_kind), and how many anonymous maps."""
    out = {f"smaps_{k}_mb": 0.0 for k in ("heap", "mmap", "stack", "file")}
    for m in maps.values():
        out[f"smaps_{mapping_kind(m)}_mb"] += m["anon_kb"] / 1024
    out["smaps_maps"] = len(maps)
    return out


def mapping_growth(before: dict[str, dict], after: dict[str, dict], top: int = TRACE_TOP
                   ) -> list[dict]:  # fmt: skip
    """The mappings whose anonymous pages grew most between two anon_mappings() (new
    mappings count from 0; gone ones as negative)."""
    rows = []
    for start in before.keys() | after.keys():
        a, b = before.get(start), after.get(start)
        m = b or a
        diff = (b["anon_kb"] if b else 0) - (a["anon_kb"] if a else 0)
        if diff:
            rows.append({"start": start, "name": m["name"] or "(anonymous)", "perms": m["perms"],
                         "kind": mapping_kind(m), "size_kb": m["size_kb"], "anon_diff_kb": diff,
                         "anon_kb": b["anon_kb"] if b else 0, "new": a is None})  # fmt: skip
    rows.sort(key=lambda r: -abs(r["anon_diff_kb"]))
    return rows[:top]


def sample(frame: int, t0: float, trim: bool = False, smaps: bool = False) -> dict:
    """The memory and object figures now; `t_s`: seconds since `t0` (a sample's time, not a
    timed call: the slope is fitted over them); `trim`: malloc_trim first."""
    # Free unreachable cycles first: wgpu objects of garbage made before the run (e.g. an
    # earlier test's engine in the same process) would otherwise be released whenever the
    # collector happens to run and show up as a change between two samples.
    gc.collect()
    if trim:
        trim_heap()
    rss, anon = rss_mb(), anon_mb()
    return {"frame": frame, "t_s": time.perf_counter() - t0, "rss_mb": rss,
            "anon_mb": rss if anon is None else anon, "py_blocks": sys.getallocatedblocks(),
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            **malloc_mb(), **gpu_objects(),
            **(anon_by_kind(anon_mappings()) if smaps else {})}  # fmt: skip


def trace_diff(before, after, top: int = TRACE_TOP) -> list[dict]:
    """The allocation sites (by traceback) that grew most between two tracemalloc
    snapshots; the soak's own samples, tracemalloc's and imports are left out."""
    import tracemalloc

    skip = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__),
            tracemalloc.Filter(False, "<frozen importlib._bootstrap*>")]  # fmt: skip
    stats = after.filter_traces(skip).compare_to(before.filter_traces(skip), "traceback")
    out = []
    for st in sorted(stats, key=lambda x: x.size_diff, reverse=True)[:top]:
        frames = [f"{f.filename.removeprefix(str(Path.cwd()) + '/')}:{f.lineno}"
                  for f in st.traceback]  # fmt: skip
        out.append({"size_diff_kb": st.size_diff / 1024, "count_diff": st.count_diff,
                    "size_kb": st.size / 1024, "traceback": frames})  # fmt: skip
    return out


class LoopingSource:
    """A video file played again and again until `frames`."""

    kind = "video"

    def __init__(self, path: str, frames: int):
        from app.sources import open_source

        self.path = path
        self._src = open_source(path)
        self.name, self.size, self.fps = f"{path} (looped)", self._src.size, self._src.fps
        self.count, self.index, self.loops = frames, 0, 0
        self.skipped, self.concealed, self.frames_skipped = [], [], 0

    def read(self):
        from app.sources import open_source

        if self.index >= self.count:
            return None
        frame = self._src.read()
        if frame is None:  # the end of the clip: open it again (exercises the decoder too)
            self._src.close()
            self._src = open_source(self.path)
            self.loops += 1
            frame = self._src.read()
        frame.index = self.index
        self.index += 1
        return frame

    @property
    def frames_read(self) -> int:
        return self.index

    def close(self) -> None:
        self._src.close()


def soak_effect(effect: str, style: str | None, frames: int, every: int,
                input_path: str | None = None, *, trace: int = 0, trim: bool = False,
                smaps: bool = False, warmup: int = 300, container: str = "mp4") -> dict:  # fmt: skip
    """One effect in this process: the headless path on a looped clip; the samples.
    `trace`: tracemalloc with that many frames of traceback, the growth from the first
    sample at or after `warmup` frames to the last in `tracemalloc`; `trim`: sample()'s;
    `smaps`: anonymous memory by kind of mapping in every sample, and the mappings that
    grew from that first sample to the last in `mappings`; `container`: the output file's
    extension. The samples go to a file as they are taken, so the soak's own records do
    not grow the heap it measures."""
    from app.headless import run_headless
    from app.models import load_model
    from app.options import build_parser
    from app.pipeline import make_pipeline
    from engine.gpu.device import shared_context

    input_path = input_path or default_input(effect)
    models = effect_models(effect)
    argv = [a for m in models for a in ("--model", m)] + ["--effect", effect, "--headless"]
    args = build_parser().parse_args(argv + (["--style", style] if style else []))
    specs = [load_model(m) for m in models]
    source = LoopingSource(input_path, frames)
    ctx = shared_context()
    pipeline = make_pipeline(args, ctx, specs, effect, source.size, "bgra8unorm")
    # sampled in the loop's thread right after a frame is finished: no encoder is being
    # recorded then (the source is read on a worker thread, frames overlap: app/headless.py)
    t0, finish = time.perf_counter(), pipeline.finish
    marks: dict[int, object] = {}  # frame -> tracemalloc snapshot / smaps (the first in files)
    if trace:
        import tracemalloc

        tracemalloc.start(trace)

    def mark(n: int) -> None:
        """The first tracemalloc snapshot and mapping table go to files, so they are not
        counted in the later samples; the last ones are taken in the loop, before the
        run's summary imports more."""
        snap = tracemalloc.take_snapshot() if trace else None
        maps = anon_mappings() if smaps else None
        if marks:
            marks[n] = (snap, maps)
            return
        if snap is not None:
            snap.dump(first_trace)
        Path(first_maps).write_text(json.dumps(maps))
        marks[n] = None

    def finish_and_sample(pending):
        rec = finish(pending)
        n = rec.index + 1
        if n % every == 0:
            log.write(json.dumps(sample(n, t0, trim, smaps)) + "\n")
            log.flush()
            if (trace or smaps) and (not marks and n >= warmup or marks and n + every > frames):
                mark(n)
        return rec

    pipeline.finish = finish_and_sample
    try:
        with tempfile.TemporaryDirectory() as tmp:
            first_trace = str(Path(tmp) / "first.tracemalloc")
            first_maps = str(Path(tmp) / "first_maps.json")
            samples_path = Path(tmp) / "samples.jsonl"
            stats = Path(tmp) / "stats.json"  # the run's summary (--stats): its heap trims
            with open(samples_path, "w") as log:
                log.write(json.dumps(sample(0, t0, trim, smaps)) + "\n")
                code = run_headless(pipeline, source, Path(tmp) / f"soak.{container}",
                                    stats_path=stats, progress=False, report=False)  # fmt: skip
            samples = [json.loads(line) for line in samples_path.read_text().splitlines()]
            heap_trim = json.loads(stats.read_text()).get("heap_trim")
            grown = mappings = None
            if len(marks) == 2:
                (since, _), (until, (last_snap, last_maps)) = marks.items()
                if trace:
                    tracemalloc.stop()
                    grown = {"from_frame": since, "to_frame": until,
                             "sites": trace_diff(tracemalloc.Snapshot.load(first_trace),
                                                 last_snap)}  # fmt: skip
                if smaps:
                    first = json.loads(Path(first_maps).read_text())
                    mappings = {"from_frame": since, "to_frame": until,
                                "maps": mapping_growth(first, last_maps)}  # fmt: skip
    finally:
        pipeline.effect.solution.close()
    return {"effect": effect, "style": pipeline.effect.style_name, "frames": frames,
            "exit": code, "adapter": adapter_record(ctx), "loops": source.loops,
            "input": input_path, "models": [Path(m).stem for m in models],
            "trim": trim, "container": container, "heap_trim": heap_trim,
            "tracemalloc": grown, "mappings": mappings, "samples": samples}  # fmt: skip


def run_child(effect: str, style: str | None, frames: int, every: int, input_path: str | None,
              out_json: str, **options) -> None:  # fmt: skip
    from app.heap import map_large_blocks, share_heaps

    share_heaps()  # first thing, as ar-demo's main (app/cli.py)
    map_large_blocks()
    run = soak_effect(effect, style, frames, every, input_path, **options)
    Path(out_json).write_text(json.dumps(run))


def _points(samples: list[dict], warmup: int, key: str):
    """The samples from `warmup` frames on (all of them if none): minutes, frames, `key`."""
    import numpy as np

    s = [x for x in samples if x["frame"] >= warmup] or samples
    t = np.array([x["t_s"] for x in s], np.float64) / 60.0
    f = np.array([x["frame"] for x in s], np.float64)
    return t, f, np.array([x[key] for x in s], np.float64)


def slope(samples: list[dict], warmup: int, key: str = "rss_mb") -> tuple[float, float]:
    """Least-squares growth of `key` from `warmup` frames on: (per minute, per frame)."""
    import numpy as np

    t, f, y = _points(samples, warmup, key)
    if len(t) < 2:
        return 0.0, 0.0
    return float(np.polyfit(t, y, 1)[0]), float(np.polyfit(f, y, 1)[0])


def slope_error(samples: list[dict], warmup: int, key: str = "anon_mb") -> float:
    """The standard error of `slope`'s per-minute figure: sqrt(residual variance / sum of
    (t - mean t)^2), the residuals' spread as it reaches the slope (samples that swing by
    a few MB make a slope that a target of 0.2 MB/min cannot be read against)."""
    import numpy as np

    t, _, y = _points(samples, warmup, key)
    if len(t) < 3:
        return float("nan")
    fit = np.polyval(np.polyfit(t, y, 1), t)
    residual = float(np.sum((y - fit) ** 2)) / (len(t) - 2)
    return float(np.sqrt(residual / np.sum((t - t.mean()) ** 2)))


def summarize(run: dict, warmup: int) -> dict:
    """The table row of one child's run: the target is on anonymous memory (anon_mb())."""
    s = run["samples"]
    per_min, per_frame = slope(s, warmup, "anon_mb")
    half = s[-1]["frame"] / 2  # the second half
    half_min, half_frame = slope(s, half, "anon_mb")
    used = all("malloc_used_mb" in x for x in s)
    used_min, used_frame = slope(s, half, "malloc_used_mb") if used else (None, None)
    rss_min, _ = slope(s, warmup, "rss_mb")
    loads = [x["load"] for x in s if x.get("load") is not None]
    after = [x for x in s if x["frame"] >= warmup] or s
    first, last = after[0], s[-1]
    native = [x["native_total"] for x in after]
    return {
        "effect": run["effect"], "style": run["style"], "frames": run["frames"],
        "minutes": (last["t_s"] - s[0]["t_s"]) / 60.0,
        "anon_start_mb": s[0]["anon_mb"], "anon_warm_mb": first["anon_mb"],
        "anon_end_mb": last["anon_mb"], "rss_warm_mb": first["rss_mb"],
        "rss_end_mb": last["rss_mb"], "rss_slope_mb_per_min": rss_min,
        "slope_mb_per_min": per_min, "slope_kb_per_frame": per_frame * 1024,
        "half_slope_mb_per_min": half_min, "half_slope_kb_per_frame": half_frame * 1024,
        "half_slope_se_mb_per_min": slope_error(s, half),
        "used_half_slope_mb_per_min": used_min,
        "used_half_slope_kb_per_frame": None if used_frame is None else used_frame * 1024,
        "fps": (last["frame"] - s[0]["frame"]) / max(last["t_s"] - s[0]["t_s"], 1e-9),
        "load": (min(loads), max(loads)) if loads else None,
        "input": Path(run.get("input") or "?").name, "trim": run.get("trim", False),
        "container": run.get("container", "mp4"),
        "heap_trims": (run.get("heap_trim") or {}).get("trims"),
        "py_blocks": (first["py_blocks"], last["py_blocks"]),
        "py_objects": (first["py_total"], last["py_total"]),
        "native_objects": (native[0], native[-1]),
        "gpu_bytes": (first["gpu_bytes"], last["gpu_bytes"]),
        "smaps_half_slopes": {k: slope(s, half, k)[0] for k in SMAPS_KINDS if k in last},
        "ok": half_min < TARGET_MB_PER_MIN and last["py_total"] <= first["py_total"],
        "exit": run["exit"],
    }  # fmt: skip


HEADER = ["effect", "style", "input -> output", "frames", "min", "FPS", "load",
          "anon MB start -> warm -> end",
          "slope MB/min", "KB/frame", "2nd half MB/min", "2nd half KB/frame",
          "malloc'd 2nd half MB/min",
          "RSS MB warm -> end (slope)", "Python blocks", "wgpu-py objects", "wgpu-core objects",
          "GPU MB", "heap trims", f"< {TARGET_MB_PER_MIN} MB/min"]  # fmt: skip


def markdown(rows: list[dict], warmup: int, runs: list[dict] | None = None) -> str:
    cells = []
    for r in rows:
        mb = tuple(f"{b / 2**20:.1f}" for b in r["gpu_bytes"])
        load = "-" if not r.get("load") else f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"
        cells.append([
            r["effect"], r["style"],
            f"{r['input']} -> {r['container']}" + (" (trim)" if r["trim"] else ""), r["frames"],
            f"{r['minutes']:.1f}", f"{r['fps']:.0f}", load,
            f"{r['anon_start_mb']:.0f} -> {r['anon_warm_mb']:.1f} -> {r['anon_end_mb']:.1f}",
            f"{r['slope_mb_per_min']:.2f}", f"{r['slope_kb_per_frame']:.2f}",
            f"{r['half_slope_mb_per_min']:.2f} ± {r['half_slope_se_mb_per_min']:.2f}",
            f"{r['half_slope_kb_per_frame']:.2f}",
            "-" if r["used_half_slope_mb_per_min"] is None
            else f"{r['used_half_slope_mb_per_min']:.2f}",
            f"{r['rss_warm_mb']:.0f} -> {r['rss_end_mb']:.0f} ({r['rss_slope_mb_per_min']:.2f})",
            f"{r['py_blocks'][0]} -> {r['py_blocks'][1]}",
            f"{r['py_objects'][0]} -> {r['py_objects'][1]}",
            f"{r['native_objects'][0]} -> {r['native_objects'][1]}", f"{mb[0]} -> {mb[1]}",
            "-" if r.get("heap_trims") is None else r["heap_trims"], "yes" if r["ok"] else "NO",
        ])  # fmt: skip
    lines = [*table(HEADER, cells, "lllrrrllrrrrrlllllrl"), "",
             f"slope: least squares over the samples from frame {warmup}; 2nd half: from "
             f"half the frames, ± its standard error; load: the 1-minute load average over "
             f"the samples"]  # fmt: skip
    for r in rows:
        if r.get("smaps_half_slopes"):
            kinds = ", ".join(f"{k[6:-3]} {v:+.2f}" for k, v in r["smaps_half_slopes"].items())
            lines += ["", f"anonymous memory by mapping, {r['effect']}: 2nd half MB/min: {kinds}"]
    for run in runs or []:
        maps = run.get("mappings")
        if maps:
            lines += ["", f"mappings, {run['effect']}: anonymous KB grown, frames "
                          f"{maps['from_frame']} -> {maps['to_frame']}", ""]  # fmt: skip
            for m in maps["maps"]:
                lines.append(f"- {m['anon_diff_kb']:+d} KB ({m['anon_kb']} of {m['size_kb']} "
                             f"KB{', new' if m['new'] else ''}): {m['kind']} {m['perms']} "
                             f"{m['name']} @{m['start']}")  # fmt: skip
    for run in runs or []:
        grown = run.get("tracemalloc")
        if not grown:
            continue
        lines += ["", f"tracemalloc, {run['effect']}: growth by traceback, frames "
                      f"{grown['from_frame']} -> {grown['to_frame']}", ""]  # fmt: skip
        for site in grown["sites"]:
            where = " <- ".join(reversed(site["traceback"][-4:]))
            lines.append(f"- {site['size_diff_kb']:+.1f} KB ({site['count_diff']:+d} blocks): "
                         f"{where}")  # fmt: skip
    return "\n".join(lines)


def _effect_names() -> list[str]:
    from app.effects import EFFECTS

    return list(EFFECTS)


def _runs(effects: list[str], styles: str) -> list[tuple[str, str | None]]:
    from app.effects import EFFECTS

    if styles == "default":
        return [(e, None) for e in effects]
    return [(e, s) for e in effects for s in EFFECTS[e].styles]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.app.soak", description=__doc__.split("\n")[0]
    )
    p.add_argument("--frames", type=int, default=3000)
    p.add_argument("--every", type=int, default=100, help="sample every N frames")
    p.add_argument("--warmup", type=int, default=300, help="frames left out of the slope")
    p.add_argument("--effects", default="all",
                   help="comma-separated, or all: " + ", ".join(_effect_names()))  # fmt: skip
    p.add_argument("--styles", choices=("default", "all"), default="default")
    p.add_argument("--input", default=None, help="video to loop (default: people.mp4 for "
                   "hands, pose and holistic, sample.mp4 for the others)")  # fmt: skip
    p.add_argument("--trace", type=int, default=0, metavar="N",
                   help="tracemalloc with N frames of traceback: list what grew (slow)")  # fmt: skip
    p.add_argument("--trim", action="store_true", help="malloc_trim(0) before each sample")
    p.add_argument("--smaps", action="store_true",
                   help="anonymous memory by kind of mapping (/proc/self/smaps) in each "
                   "sample; list the mappings that grew")  # fmt: skip
    p.add_argument("--container", choices=("mp4", "mkv"), default="mp4",
                   help="the output file's format (mp4: ar-demo's default)")  # fmt: skip
    p.add_argument("--json", metavar="OUT.json", help="write the rows and every sample")
    p.add_argument("--child", nargs=2, metavar=("EFFECT", "STYLE"), help=argparse.SUPPRESS)
    p.add_argument("--child-out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        effect, style = args.child
        run_child(effect, None if style == "-" else style, args.frames, args.every, args.input,
                  args.child_out, trace=args.trace, trim=args.trim, smaps=args.smaps,
                  warmup=args.warmup,
                  container=args.container)  # fmt: skip
        return 0
    effects = [e.strip() for e in args.effects.split(",") if e.strip()]
    if effects == ["all"]:
        effects = _effect_names()
    bad = [e for e in effects if e not in _effect_names()]
    if bad:
        p.error(f"unknown effect(s) {', '.join(bad)}; choose from {', '.join(_effect_names())}")
    bench = Bench(__spec__.name, argv)
    runs, rows = [], []
    for effect, style in _runs(effects, args.styles):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            out = tmp.name
        cmd = [sys.executable, "-m", "benchmarks.app.soak", "--child", effect, style or "-",
               "--child-out", out, "--frames", str(args.frames), "--every", str(args.every),
               "--warmup", str(args.warmup), "--trace", str(args.trace),
               "--container", args.container,
               *(["--trim"] if args.trim else []), *(["--smaps"] if args.smaps else []),
               *(["--input", args.input] if args.input else [])]  # fmt: skip
        print(f"soak: {effect} {style or '(default style)'}, {args.frames} frames ...",
              file=sys.stderr, flush=True)  # fmt: skip
        proc = subprocess.run(cmd)
        if proc.returncode != 0:
            print(f"soak: {effect}: the child failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        run = json.loads(Path(out).read_text())
        os.unlink(out)
        bench.adapter = run["adapter"]  # the same in every child
        runs.append(run)
        rows.append(summarize(run, args.warmup))
    bench.report(markdown(rows, args.warmup, runs), {"rows": rows, "runs": runs}, args.json)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
