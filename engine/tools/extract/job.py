"""One video -> one result file: the unit of work, in this process or as a Ray task.

- `Job`: the video (as given), its result file, the solution's name and options,
  max_frames; plain data, so Ray can ship it
- `run_job(job, on_frames)` -> `Outcome` ("done", "skipped": the result file exists, or
  "failed" with one line naming the file and the problem); never raises for a bad input;
  `on_frames(done, total)` after each frame (total None: the container declares no count)
- a new solution per video: tracking state never crosses videos, and a file's results do
  not depend on which worker ran it or what it ran before
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from engine.errors import EngineError
from engine.tools.extract.options import resolved_options, solution_class, solution_fields
from engine.tools.extract.table import ResultFile, arrow_schema, plain
from engine.tools.extract.video import Video, VideoError


@dataclass(frozen=True)
class Job:
    video: str
    out: str
    solution: str
    options: dict
    max_frames: int | None = None


@dataclass(frozen=True)
class Outcome:
    video: str
    status: str  # "done", "skipped" or "failed"
    message: str = ""
    frames: int = 0


def engine_version() -> str:
    try:
        return metadata.version("webgpu-ar")
    except metadata.PackageNotFoundError:
        return "unknown"


def file_metadata(job: Job, solution) -> dict[str, str]:
    """What produced the file; no time, no host (the bytes stay deterministic)."""
    info = solution.ctx.info if solution.ctx is not None else {}
    meta = {"solution": job.solution, "options": json.dumps(resolved_options(
                job.solution, job.options), sort_keys=True),
            "engine_version": engine_version(), "backend": solution.backend.name,
            # the adapter, where the models ran on it (engines on the GPU)
            "adapter": str(info.get("device", "")) if solution.engines else "",
            "video": job.video,
            "max_frames": "" if job.max_frames is None else str(job.max_frames)}  # fmt: skip
    return {f"engine_extract.{k}": v for k, v in meta.items()}


def _extract(job: Job, on_frames: Callable[[int, int | None], None]) -> int:
    from engine.vision.records import frame_record

    fields = solution_fields(job.solution)
    with Video(job.video) as video, solution_class(job.solution)(**job.options) as solution:
        total = video.frames
        if job.max_frames is not None:
            total = min(total, job.max_frames) if total else None
        on_frames(0, total)
        schema = arrow_schema(fields, file_metadata(job, solution))
        with ResultFile(Path(job.out), schema) as out:
            frames = 0
            # stream(): the video decodes on a worker thread, a frame ahead of the models
            for result in solution.stream(video.read(job.max_frames)):
                out.append(plain(frame_record(frames, result), fields))
                frames += 1
                on_frames(frames, total)
            out.commit()
    return frames


def run_job(job: Job, on_frames: Callable[[int, int | None], None] = lambda d, t: None):
    """Run `job` unless its result file exists; see the module docstring."""
    if Path(job.out).exists():
        return Outcome(job.video, "skipped", f"{job.out} exists")
    try:
        return Outcome(job.video, "done", frames=_extract(job, on_frames))
    except (VideoError, EngineError, ValueError, OSError) as exc:  # bad input or option
        return Outcome(job.video, "failed", str(exc))
    except Exception as exc:  # a bug: this video fails, the others still run
        return Outcome(job.video, "failed", f"{type(exc).__name__}: {exc}")
