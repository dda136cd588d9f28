"""Building an effect without stopping the display: progress, a worker thread, launch time.

- `BuildStatus`: listens to engine.gpu.progress while an effect is built (per model:
  planning, creating pipelines k/n, compiling shaders k/n, ready; then the first draw);
  read from any thread: the start-up screen, the HUD and the headless progress line
  show it; `cancel()` makes the next progress step raise BuildCancelled
- `Build`: `fn()` on a daemon thread under `report_to(status)` (engine.gpu.BackgroundBuild,
  the engine's staged start runs on it too); the owner polls `done` and takes `result` or
  `error` between frames (planner / precision switches, start-up)
- `warm_effect()`: an effect's engines run once pipeline by pipeline (k/n), then one
  frame of it offscreen, so that its first real frame compiles nothing
- `since_launch()`: seconds since this process started (time-to-first-frame figures)
- usage: `b = Build(lambda: pipeline.make_effect(), BuildStatus("segmentation", names))`

Why a thread helps: wgpu-py releases the GIL in its native calls, so pipeline creation
and the warm-up's waits leave the display thread free; the pure-Python parts (transforms,
WGSL generation, ~0.5 s a model) share the GIL with it, which the display loop tolerates
(a 220-call frame went from 1.0 to 3.6 ms beside a busy Python thread).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from app.effects.base import DepthBuffer
from engine.gpu import BackgroundBuild, Fence, Progress, report_to, warm_up


class BuildCancelled(Exception):
    """Raised inside a build whose owner gave up on it (window closed during start-up)."""


SHORT_TEXT = {  # the HUD's narrow column
    "waiting": "waiting",
    "graph": "planning",
    "pipelines": "pipelines {done}/{total}",
    "shaders": "shaders {done}/{total}",
    "ready": "ready",
}
PHASE_TEXT = {
    "waiting": "waiting",
    "graph": "planning (transforms, kernels, memory)",
    "pipelines": "creating pipelines {done}/{total}",
    "shaders": "compiling shaders {done}/{total}",
    "ready": "ready ({total} shaders)",
}


class BuildStatus:
    """The progress of one build (see the module docstring)."""

    def __init__(self, what: str, models: list[str] = (), echo=None):
        self.what = what  # "segmentation", "planner greedy", ...
        self.t0 = time.perf_counter()
        self.models: dict[str, Progress] = {m: Progress(m, "waiting") for m in models}
        self.stage = "models"  # -> "first frame" -> "done" | "failed"
        self.error: str | None = None
        self.elapsed: float | None = None  # set when done or failed
        self.cancelled = False
        self.echo = echo  # a StartupLine (headless) or None

    def __call__(self, p: Progress) -> None:
        if self.cancelled:
            raise BuildCancelled(self.what)
        self.models[p.model] = p
        if self.echo is not None:
            self.echo.update(self)

    def set_stage(self, stage: str) -> None:
        if self.cancelled:
            raise BuildCancelled(self.what)
        self.stage = stage
        if stage in ("done", "failed"):
            self.elapsed = time.perf_counter() - self.t0
        if self.echo is not None:
            self.echo.update(self)

    def cancel(self) -> None:
        self.cancelled = True

    @property
    def seconds(self) -> float:
        return self.elapsed if self.elapsed is not None else time.perf_counter() - self.t0

    def model_lines(self) -> list[tuple[str, str, float]]:
        """(model, what it is doing, fraction of its current phase) per model."""
        out = []
        for name, p in self.models.items():
            frac = p.done / p.total if p.total else (1.0 if p.phase == "ready" else 0.0)
            out.append((name, PHASE_TEXT[p.phase].format(done=p.done, total=p.total), frac))
        return out

    def current(self) -> Progress | None:
        """The model being worked on (the last one past "waiting" and not ready)."""
        busy = [p for p in self.models.values() if p.phase not in ("waiting", "ready")]
        return busy[-1] if busy else None

    def headline(self, short: bool = False) -> str:
        """One line: the model being worked on and its phase, or the stage after them
        (`short`: for the HUD's 32 characters)."""
        if self.stage == "failed":
            return f"failed: {self.error}"
        if self.stage != "models":
            return self.stage
        p = self.current()
        if p is None:
            started = any(p.phase != "waiting" for p in self.models.values())
            return "first frame" if started else "starting"
        if short:
            return f"{p.model[:14]}: " + SHORT_TEXT[p.phase].format(done=p.done, total=p.total)
        return f"{p.model}: " + PHASE_TEXT[p.phase].format(done=p.done, total=p.total)

    def shaders(self) -> int:
        return sum(p.total for p in self.models.values() if p.phase in ("shaders", "ready"))


class Build(BackgroundBuild):
    """`fn()` on a worker thread (engine.gpu.BackgroundBuild, the staged start's too),
    reporting to `status` (see the module docstring)."""

    def __init__(self, fn: Callable[[], object], status: BuildStatus, **info):
        self.status, self.info = status, info  # info: what the owner needs at the swap
        super().__init__(lambda: self._reported(fn), f"build {status.what}")

    def _reported(self, fn):
        with report_to(self.status):
            try:
                result = fn()
            except BaseException as exc:  # the owner's thread gets it as `error`
                self.status.error = (
                    f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                )
                self.status.stage = "failed"
                self.status.elapsed = time.perf_counter() - self.status.t0
                raise
            self.status.set_stage("done")
            return result

    def cancel(self, timeout: float = 10.0) -> None:
        """Stop at the next progress step and wait for the thread (at most `timeout` s)."""
        self.status.cancel()
        self.wait(timeout)


class StartupLine:
    """Headless: the build's progress as one line on stderr (rewritten in place on a
    terminal, a line per phase change otherwise), then "ready in X s"."""

    def __init__(self, stream=None, interval: float = 0.1):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval, self._t, self._last = interval, 0.0, None

    def update(self, status: BuildStatus) -> None:
        if status.stage == "done":
            self._write(f"ar-demo: {status.what} ready in {status.seconds:.1f} s "
                        f"({status.shaders()} shaders)", final=True)  # fmt: skip
            return
        if status.stage == "failed":
            return  # the CLI prints the error
        p = status.current()
        key = (status.stage, p.model, p.phase) if p else (status.stage,)
        now = time.perf_counter()
        if key == self._last and not (self.tty and now - self._t >= self.interval):
            return
        self._t, self._last = now, key
        self._write(f"ar-demo: starting {status.what}: {status.headline()} "
                    f"({status.seconds:.1f} s)")  # fmt: skip

    def _write(self, text: str, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def warm_effect(effect, frame_view, target_format: str, sync: str = "sleep", hud=None,
                status: BuildStatus | None = None, scratch=None) -> None:  # fmt: skip
    """Run every engine pipeline of `effect` once (engine/gpu/warmup.py: lavapipe compiles
    there, k/n reported; on `scratch` first when given), then one frame of the effect (and
    the HUD's draw) from `frame_view` as it is into a throw-away target. FaceMesh's
    tracking is reset after: the warm-up frame is no frame of the video."""
    import wgpu

    for engine in effect.engines.values():
        warm_up(engine, sync, scratch)
    if status is not None:
        status.set_stage("first frame")
    device = effect.device
    w, h = effect.frame_size
    target = device.create_texture(size=(w, h, 1), format=target_format,
                                   usage=wgpu.TextureUsage.RENDER_ATTACHMENT)  # fmt: skip
    effect.prepare(frame_view)
    encoder = device.create_command_encoder()
    for _, encode in effect.steps(frame_view):
        encode(encoder)
    view = target.create_view()
    depth, fmt = DepthBuffer(), effect.depth_format  # as FramePipeline.submit makes the pass
    attach = {} if fmt is None else {"depth_stencil_attachment": depth.attachment(device, (w, h),
                                                                                  fmt)}  # fmt: skip
    rp = encoder.begin_render_pass(color_attachments=[{
        "view": view, "clear_value": (0, 0, 0, 1), "load_op": "clear",
        "store_op": "store"}], **attach)  # fmt: skip
    effect.draw(rp, frame_view)
    if hud is not None:
        if attach:
            rp.end()
            rp = encoder.begin_render_pass(color_attachments=[{
                "view": view, "load_op": "load", "store_op": "store"}])  # fmt: skip
        hud.warm(rp)
    rp.end()
    fence = Fence(device)
    fence.signal(encoder)
    device.queue.submit([encoder.finish()])
    fence.wait(sync)
    target.destroy()
    depth.destroy()
    reset = getattr(effect.solution, "reset", None)
    if reset is not None:
        reset()


def since_launch() -> float:
    """Seconds since this process started (Linux: /proc, 10 ms steps), else since the app
    was imported."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime, ticks
        return time.clock_gettime(time.CLOCK_BOOTTIME) - start
    except (OSError, ValueError, IndexError, AttributeError):
        return time.perf_counter() - _IMPORTED


_IMPORTED = time.perf_counter()
