"""engine-extract: one of engine.vision's solutions over many videos, one Parquet file each.

Each video VIDEO.mp4 becomes DIR/VIDEO.parquet: one row per frame with the solution's
per-frame fields (the same as `ar-demo --results`: engine/vision/records.py),
landmarks as fixed-size float32 lists, and file metadata (solution, options, engine
version, backend). A video whose result file exists is skipped, so an interrupted run
resumes where it stopped; each file is written to a temporary name and renamed when whole.

usage: engine-extract SOLUTION VIDEO_OR_GLOB... --out DIR [--max-frames N] [--no-progress]
                      [--ray [ADDRESS]] [--cpus-per-task N] [--gpus-per-task N]
                      [solution options: --backend, --max-num-faces, ...]
Exit status: 0 every video done or skipped; 1 a video failed (one line each on stderr:
missing file, unreadable video, a glob that matches nothing); 2 bad arguments or a missing
extra (pyarrow, Ray); 130 interrupted (finished files stay).
"""

from __future__ import annotations

import argparse
import glob
import sys
from pathlib import Path

from engine.tools.extract.job import Job, run_job
from engine.tools.extract.options import SOLUTIONS, add_option_flags, solution_options
from engine.tools.extract.progress import Progress

GLOB_CHARS = frozenset("*?[")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="engine-extract", description=__doc__.split("\n\n")[0],
                                epilog="docs/extract.md: one machine, several GPUs, a "
                                       "cluster; the Parquet schema")  # fmt: skip
    p.add_argument("solution", choices=tuple(SOLUTIONS), metavar="SOLUTION",
                   help=f"one of: {', '.join(SOLUTIONS)}")  # fmt: skip
    p.add_argument(
        "videos",
        nargs="+",
        metavar="VIDEO_OR_GLOB",
        help="video files, or globs (quoted: '**' matches folders too)",
    )
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="where the result files go (made if missing)",
    )
    p.add_argument(
        "--max-frames",
        type=int,
        metavar="N",
        help="only the first N frames of each video (quick checks, tests)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (the skipped/failed lines and the summary stay)",
    )
    ray = p.add_argument_group("Ray", "pip install 'webgpu-ar[ray]'")
    ray.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                     help="one Ray task per video: a local Ray without ADDRESS, else the "
                          "cluster at ADDRESS (e.g. 10.0.0.1:6379)")  # fmt: skip
    ray.add_argument(
        "--cpus-per-task",
        type=float,
        default=1.0,
        metavar="N",
        help="CPUs Ray reserves per video (1; see --num-threads)",
    )
    ray.add_argument("--gpus-per-task", type=float, metavar="N",
                     help="GPUs Ray reserves per video (default: 1 when the adapter here "
                          "is a real GPU and the models run on webgpu, else 0)")  # fmt: skip
    add_option_flags(p)
    return p.parse_args(argv)


def expand(patterns: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(videos, [(pattern, problem)]): globs expanded (sorted), duplicates dropped; a glob
    that matches nothing is a problem; plain paths are checked when their job runs."""
    videos, problems = [], []
    for pattern in patterns:
        if GLOB_CHARS & set(pattern):
            found = sorted(f for f in glob.glob(pattern, recursive=True) if Path(f).is_file())
            if not found:
                problems.append((pattern, "no file matches this glob"))
            videos += found
        else:
            videos.append(pattern)
    return list(dict.fromkeys(videos)), problems


def plan(args, options: dict) -> tuple[list[Job], list[tuple[str, str]]]:
    """One Job per video, and the problems found before any runs (two videos that would
    write the same result file: the second is refused)."""
    videos, problems = expand(args.videos)
    jobs, owners = [], {}
    for video in videos:
        out = args.out / (Path(video).stem + ".parquet")
        if out in owners:
            problems.append((video, f"{owners[out]} writes {out} too: rename one"))
            continue
        owners[out] = video
        jobs.append(Job(video, str(out), args.solution, options, args.max_frames))
    return jobs, problems


def _check_extras(args) -> str | None:
    from engine.tools.extract.cluster import ray_module
    from engine.tools.extract.table import pyarrow

    try:
        pyarrow()
        if args.ray is not None:
            ray_module()
    except ImportError as exc:
        return str(exc)
    return None


def run(args, options: dict) -> int:
    jobs, problems = plan(args, options)
    progress = Progress(len(jobs) + len(problems), enabled=not args.no_progress)
    for name, problem in problems:
        progress.failed(name, problem)
    for job in [j for j in jobs if Path(j.out).exists()]:  # no task just to skip it
        progress.finish(run_job(job))
        jobs.remove(job)
    try:
        if args.ray is None:
            for job in jobs:
                report = lambda d, t, v=job.video: progress.frames(v, d, t)  # noqa: E731
                progress.finish(run_job(job, report))
        elif jobs:
            from engine.tools.extract.cluster import gpus_per_task, run_on_ray

            gpus = args.gpus_per_task
            gpus = gpus_per_task(options) if gpus is None else gpus
            run_on_ray(jobs, args.ray or None, progress, cpus=args.cpus_per_task, gpus=gpus)
    except KeyboardInterrupt:
        progress.line(f"interrupted: {progress.counts['done']} finished files kept")
        return 130
    progress.summary()
    return 1 if progress.counts["failed"] else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    missing = _check_extras(args)
    try:
        options = solution_options(args.solution, args)
        args.out.mkdir(parents=True, exist_ok=True)
    except (ValueError, OSError) as exc:
        missing = missing or str(exc)
    if missing:
        print(f"engine-extract: error: {missing}", file=sys.stderr)
        return 2
    return run(args, options)


if __name__ == "__main__":
    sys.exit(main())
