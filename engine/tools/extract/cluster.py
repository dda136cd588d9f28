"""`engine-extract --ray [ADDRESS]`: the jobs as Ray tasks, one per video.

- `ray.init()` on this machine without an address (a local Ray with every core), else
  `ray.init(address=ADDRESS)` (a running cluster: `ray start --head` on one machine,
  `ray start --address HEAD:6379` on the others); a Ray already initialised by the caller
  is used as it is
- resources per task: `num_cpus` (--cpus-per-task, 1), `num_gpus` 1 when this machine's
  adapter is a real GPU and the models run on webgpu, else none (--gpus-per-task sets it)
- progress: each task reports its frames through a Ray queue; the outcomes are collected
  as the tasks finish (ray.wait), failures reported the same way as in this process
- the workers import the same `engine` as this process (a local Ray gets its folder on
  PYTHONPATH; a cluster's nodes have webgpu-ar installed)
- Ctrl-C cancels the tasks (each removes its temporary file); finished files stay
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from engine.tools.extract.job import Job, Outcome, run_job
from engine.tools.extract.progress import Progress

INSTALL = "pip install 'webgpu-ar[ray]'"
REPORT_EVERY_S = 0.25  # a task's frame reports, at most this often (each is an actor call)


def ray_module():
    """ray, or ImportError with the pip command (an extra)."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"--ray needs Ray: `{INSTALL}`") from None
    return ray


def gpus_per_task(options: dict) -> float:
    """1 when the models run on webgpu and this machine's adapter is a real GPU, else 0."""
    from engine.errors import EngineError
    from engine.gpu import adapter_class, shared_context

    if options.get("backend") == "xnnpack":
        return 0.0
    try:
        ctx = shared_context(options.get("adapter"))
    except EngineError:
        return 0.0
    return 1.0 if adapter_class(ctx.info) == "gpu" else 0.0


def _reporter(queue, video: str) -> Callable[[int, int | None], None]:
    last = [0.0]

    def on_frames(done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] >= REPORT_EVERY_S or done == total:
            last[0] = now
            queue.put_nowait((video, done, total))

    return on_frames


def _task(job: Job, queue) -> Outcome:
    return run_job(job, _reporter(queue, job.video))


QUIET = {"logging_level": "WARNING", "log_to_driver": False}


def local_ray_options() -> dict:
    """ray.init()'s options for a local Ray: quiet, no dashboard, and the workers import
    the `engine` this process imported (a checkout's, not only an installed one)."""
    import engine

    root = str(Path(engine.__file__).resolve().parent.parent)
    return {**QUIET, "include_dashboard": False, "runtime_env": {"env_vars": {"PYTHONPATH": root}}}


def _init(ray, address: str | None) -> bool:
    """Connect (or start a local Ray); True when this call did, so it shuts down after."""
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, **QUIET)
    else:
        ray.init(**local_ray_options())
    return True


def run_on_ray(jobs: list[Job], address: str | None, progress: Progress, *, cpus: float,
               gpus: float) -> None:  # fmt: skip
    """Run `jobs` as Ray tasks; each outcome goes to `progress` as it arrives."""
    ray = ray_module()
    from ray.util.queue import Queue

    started = _init(ray, address)
    try:
        queue = Queue()
        task = ray.remote(num_cpus=cpus, num_gpus=gpus, max_retries=0)(_task)
        refs = {task.remote(job, queue): job for job in jobs}
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1, timeout=0.2)
                for video, done, total in queue.get_nowait_batch(queue.qsize()):
                    progress.frames(video, done, total)
                for ref in ready:
                    progress.finish(_outcome(ray, ref, refs[ref]))
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref)
            raise
    finally:
        if started:
            ray.shutdown()


def _outcome(ray, ref, job: Job) -> Outcome:
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as exc:  # the worker died (out of memory, killed)
        return Outcome(job.video, "failed", f"Ray task failed: {str(exc).splitlines()[0]}")
