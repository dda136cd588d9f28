"""One frame through the GPU: upload -> effect stages -> render (+ HUD) -> one submit -> wait.

- input: a `Frame` (BGR), a render target view (window surface or offscreen texture)
- output: the rendered target; a `FrameRecord` (CPU ms per stage, GPU ms per stage from
  timestamps, wait wall/CPU ms, latency); optionally the rendered pixels (headless only)
- options: sync mode `sleep` | `spin` (switchable between frames), GPU timestamps when the
  adapter has them, a HUD drawn in the same render pass
- usage: `p = FramePipeline(ctx, specs, "segmentation", (640, 480), "bgra8unorm")`;
  `rec = p.process(frame, target_view)`
- the effect: built and run once offscreen before its first frame (`make_effect`, with
  progress to a BuildStatus); `build=False` leaves it to the owner (the window builds it
  on a worker thread, then `set_effect`); `switch(planner=..., precision=...)` builds a
  new one on a worker thread while the current one draws and swaps it in between frames
- kernels "staged" (the window's default, app/options.py): the effect is built with the
  compact kernel set, which compiles several times faster, and set_effect starts a switch
  to the optimized set at once (changes asked meanwhile wait in `queued`);
  `startup_s["optimized_kernels"]` says when it was swapped in

Per frame: one write_texture (the frame), one command encoder, one submit. No tensor is
read back; `transfers()` counts what crossed the bus: frame uploads, small uniform writes,
HUD vertex uploads, timestamp reads and (headless) the final-frame readback, apart.
Results: the face flag goes into a GPU tally each frame (app/results.FaceTally: frames with
a face in the summary, read back every 4096 frames); `results` (--results) reads each
frame's results back after the wait and writes them as JSON lines (one map per frame).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from app.build import Build, BuildStatus, StartupLine, since_launch, warm_effect
from app.effects import effect_class
from app.effects.base import DepthBuffer
from app.results import FaceTally, ResultsWriter
from app.sources import Frame, FrameUploader
from app.timeline import FrameRecord, Timeline
from engine.gpu import (
    MAP_READ_SUBMITTED,
    SYNC_MODES,
    Fence,
    GpuMarks,
    compiles_late_with_cache,
    report_to,
    scratch_context,
)

IN_FLIGHT = 2  # frames submitted before the oldest is waited for (headless: submit/finish)


class _Laps:
    """CPU ms per stage of a FrameRecord, from one lap to the next."""

    def __init__(self, rec: FrameRecord):
        self.rec, self.t = rec, time.perf_counter()

    def __call__(self, stage: str) -> None:
        now = time.perf_counter()
        self.rec.cpu_ms[stage] = self.rec.cpu_ms.get(stage, 0.0) + (now - self.t) * 1e3
        self.t = now


class ImagePool:
    """The arrays read-out frames are written into: `take(shape)` one (a kept one when one
    has been given back, else new), `give(image)` it back once written (from any thread).
    The first take of a shape makes all KEEP arrays at once, so the pool's memory is
    constant from the first frame; an image past KEEP is dropped when given back, and one
    not given back (a caller that keeps rec.image) is simply not reused.

    Why: a new 0.9 MB array a 640x480 frame, allocated on the loop's thread and freed on
    the encoder's, fragmented glibc's heap over a long run; and a pool that grew whenever
    the encoder fell behind held 0.9 MB more from then on (a soak's bytes in use stepped
    up late in the run, reading as growth)."""

    KEEP = 3  # one read out, one in the encoder's queue, one being written (more: new ones)

    def __init__(self):
        self._free: list[np.ndarray] = []
        self._shape: tuple[int, ...] | None = None
        self._lock = threading.Lock()

    def take(self, shape: tuple[int, ...]) -> np.ndarray:
        with self._lock:
            if shape != self._shape:  # the first frame, or a new size: all KEEP anew
                self._shape = shape
                self._free = [np.empty(shape, np.uint8) for _ in range(self.KEEP)]
            if self._free:
                return self._free.pop()
        return np.empty(shape, np.uint8)

    def give(self, image: np.ndarray) -> None:
        with self._lock:
            if image.shape == self._shape and len(self._free) < self.KEEP:
                self._free.append(image)


class _Slot:
    """What one frame in flight owns: its fence, its timestamp marks, its readback buffer."""

    def __init__(self, device, timing: bool):
        self.device = device
        self.fence = Fence(device)
        self.marks = GpuMarks(device) if timing else None
        self._readback = None  # (buffer, (w, h), bytes per row)

    def copy_out(self, encoder, texture) -> None:
        """Record the copy of the rendered `texture` into this slot's mappable buffer."""
        import wgpu

        w, h = texture.size[0], texture.size[1]
        row = (w * 4 + 255) // 256 * 256
        if self._readback is None or self._readback[1] != (w, h):
            buf = self.device.create_buffer(
                size=row * h, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
            )
            self._readback = (buf, (w, h), row)
        buf, _, row = self._readback
        encoder.copy_texture_to_buffer(
            {"texture": texture}, {"buffer": buf, "bytes_per_row": row, "rows_per_image": h},
            (w, h, 1),
        )  # fmt: skip

    def read_out(self, images: ImagePool) -> np.ndarray:
        """The copied frame as BGR uint8 (H x W x 3, what the encoder takes), after the
        fence: converted straight from the mapped memory (one pass, no copy before it) into
        an array of `images`."""
        import cv2

        buf, (w, h), row = self._readback
        buf.map_sync(MAP_READ_SUBMITTED)
        mapped = np.frombuffer(buf.read_mapped(copy=False), np.uint8)
        bgr = cv2.cvtColor(mapped.reshape(h, row)[:, : w * 4].reshape(h, w, 4),
                           cv2.COLOR_BGRA2BGR, dst=images.take((h, w, 3)))  # fmt: skip
        del mapped  # no view of the mapping may outlive unmap()
        buf.unmap()
        return bgr


@dataclass
class InFlight:
    """A frame submitted by FramePipeline.submit(), until finish()."""

    frame: Frame
    rec: FrameRecord
    slot: _Slot
    readback: bool  # rec.image is read back at finish()
    cpu_s: float  # thread CPU seconds submit() took
    counts: tuple[int, int]  # the frame's submits and blocking reads of results so far


class FramePipeline:
    def __init__(self, ctx, specs, effect: str, frame_size: tuple[int, int], target_format: str,
                 *, sync: str = "sleep", precision: str = "fp32", planner: str | None = None,
                 storage: str = "auto", kernels: str = "optimized", backend: str = "auto",
                 gpu_timing: bool = True,
                 results: str | None = None, style: int = 0, build: bool = True,
                 status: BuildStatus | None = None, effect_options: dict | None = None):  # fmt: skip
        if sync not in SYNC_MODES:
            raise ValueError(f"sync must be one of {SYNC_MODES}, not {sync!r}")
        self.ctx, self.device = ctx, ctx.device
        self.frame_size, self.target_format, self.sync = frame_size, target_format, sync
        self.effect_name, self.specs, self.style = effect, specs, style
        # kernels "staged" (engine/gpu/staged.py): the engine's order of kernel sets,
        # STAGED_SETS, a whole effect at a time (its stages bind the engines' buffers, which
        # an engine's own swap would replace): built with the first set; the switch to the
        # second starts as soon as that effect is set (set_effect)
        from engine.gpu import KERNEL_MODES, STAGED, STAGED_SETS

        if kernels not in KERNEL_MODES:
            raise ValueError(f"kernels must be one of {KERNEL_MODES}, not {kernels!r}")
        self.staged = kernels == STAGED
        self.staged_sets = STAGED_SETS
        self.staged_switch: Build | None = None  # that switch while it runs
        self.queued: dict | None = None  # a switch asked for meanwhile (switch())
        self.options = {"precision": precision, "planner": planner, "storage": storage,
                        "kernels": STAGED_SETS[0] if self.staged else kernels,
                        "backend": backend}  # fmt: skip
        self.effect_options = dict(effect_options or {})  # the effect's own (--object ...)
        self.uploader = FrameUploader(self.device, frame_size)
        self.depth = DepthBuffer()  # the pass's depth attachment, for effects that ask
        self.effect = None  # until set_effect(): build=False builds it elsewhere
        self.switching: Build | None = None  # a background rebuild (switch())
        self.switch_error: str | None = None
        self.switches: list[dict] = []  # each switch: what, seconds, frames drawn meanwhile
        timing = gpu_timing and ctx.has_timestamps
        self._slots = [_Slot(self.device, timing) for _ in range(IN_FLIGHT)]
        self._next_slot = 0
        self._in_flight: list[InFlight] = []  # submitted, not yet finished, oldest first
        self.timeline = Timeline()
        self.frame_readbacks = 0
        self.images = ImagePool()  # read-out frames (rec.image), given back once encoded
        # every submit and blocking read of results a frame made, the solution's own
        # included: (submits, reads) -> frames (a handful of distinct pairs)
        self.per_frame: Counter = Counter()
        self.last_counts = (0, 0)
        self.results = ResultsWriter(results) if results else None
        self.faces = None
        self.timeline.sections["faces"] = self.face_summary
        self.timeline.sections["switches"] = lambda: self.switches or None
        if build:
            with report_to(status):
                self.set_effect(self.make_effect(status=status))
            if status is not None:
                status.set_stage("done")

    @property
    def ready(self) -> bool:
        return self.effect is not None

    def model_names(self) -> list[str]:
        return [s.name for s in self.specs]

    # --- building and swapping effects -------------------------------------------------
    def make_effect(self, *, status: BuildStatus | None = None, hud=None, beside: bool = False,
                    **changes):  # fmt: skip
        """A new effect with this pipeline's options (`changes`: precision, planner,
        storage), its first frame run offscreen (warm_up) so that the frame it is swapped
        in for compiles nothing. Any thread; `beside`: frames are being shown meanwhile,
        so compile on a scratch device where that keeps the display's queue free."""
        opts = {**self.options, **changes}
        effect = effect_class(self.effect_name)(
            self.ctx, self.specs, self.frame_size, self.target_format, **opts, **self.effect_options
        )
        effect.style = self.effect.style if self.effect is not None else self.style
        effect.on_style()
        late = beside and compiles_late_with_cache(self.ctx)
        warm_effect(effect, self.uploader.view, self.target_format, self.sync, hud, status,
                    scratch_context(self.ctx) if late else None)  # fmt: skip
        return effect

    def set_effect(self, effect) -> None:
        """Draw with `effect` from the next frame on; the old one is closed (every frame
        is waited for: nothing of it is in flight)."""
        old, self.effect = self.effect, effect
        self.options = {"precision": effect.precision, "planner": effect.planner,
                        "storage": effect.storage, "kernels": effect.kernels,
                        "backend": effect.backend}  # fmt: skip
        flag = effect.face_flag
        if flag is not None and self.faces is None:
            self.faces = FaceTally(self.device, flag)
        elif flag is not None:
            self.faces.src = flag[0]  # the new solution's flag buffer
        if old is not None:
            old.close()
        if not effect.engines:
            self.staged = False  # no WGSL kernels to swap in (the xnnpack backend)
        first, second = self.staged_sets
        if self.staged and effect.kernels == first:
            self.switch(kernels=second)  # the first set is in: build the second
            self.staged_switch = self.switching
        elif self.staged and effect.kernels == second:
            self.timeline.startup.setdefault("optimized_kernels", since_launch())

    def switch(self, **changes) -> bool:
        """Rebuild the effect with `changes` (planner=..., precision=...) on a worker
        thread; frames keep coming from the current one and process() swaps the new one in
        once built. False while another switch is running, except the staged start's
        switch to the optimized kernels (seconds to tens of seconds with a cold cache):
        then `changes` wait in `queued` (the last asked wins) and start once it is in."""
        if self.switching is not None:
            if self.switching is self.staged_switch and "kernels" not in changes:
                self.queued = changes
                return True
            return False
        what = ", ".join(f"{k} {v or 'best'}" for k, v in changes.items())
        status = BuildStatus(what, self.model_names())
        self.switch_error = None
        self.switching = Build(
            lambda: self.make_effect(status=status, beside=True, **changes), status,
            t_start=time.perf_counter(), frames=[],
        )  # fmt: skip
        return True

    def _adopt_switch(self) -> None:
        """Between frames: take a finished switch's effect, or keep its error for the HUD."""
        b = self.switching
        if b is None or not b.done:
            return
        self.switching = None
        if b is self.staged_switch:
            self.staged_switch = None
            self.staged = b.error is None  # failed: no second try at every later switch
        done = b.info["frames"]  # when each frame drawn meanwhile was done
        gaps = np.diff([b.info["t_start"], *done, time.perf_counter()])
        self.switches.append({
            "what": b.status.what, "seconds": round(b.status.seconds, 3),
            "ok": b.error is None, "frames_meanwhile": len(done),
            "longest_frame_gap_ms": round(float(gaps.max()) * 1e3, 1),
        })  # fmt: skip
        if b.error is not None:
            self.switch_error = f"{b.status.what}: {b.status.error}"
        else:
            self.set_effect(b.result)
        if self.queued is not None and self.switching is None:
            changes, self.queued = self.queued, None
            self.switch(**changes)

    def cancel_switch(self, timeout: float = 10.0) -> None:
        """Stop a running switch at its next step; close an effect it built and nothing
        adopted (the end of a run)."""
        b, self.switching, self.queued = self.switching, None, None
        if b is None:
            return
        if not b.done:
            b.cancel(timeout)
        if b.done and b.result is not None:
            b.result.close()

    def set_planner(self, planner: str | None) -> None:
        """Rebuild with another memory planner now (blocking; the window uses switch())."""
        self.set_effect(self.make_effect(planner=planner))

    # --- controls --------------------------------------------------------------------
    def toggle_sync(self) -> str:
        self.sync = "spin" if self.sync == "sleep" else "sleep"
        return self.sync

    def face_summary(self) -> dict | None:
        """Frames with a face (None for effects without faces), --results frames."""
        out = self.faces.summary() if self.faces is not None else None
        if self.results is not None:
            out = {**(out or {}), "results_file": str(self.results.path),
                   "results_frames": self.results.frames}  # fmt: skip
        return out

    # --- one frame -------------------------------------------------------------------
    def process(self, frame: Frame, target_view, *, hud=None, readback_texture=None) -> FrameRecord:
        """Render `frame` into `target_view`; with `readback_texture` also return its pixels
        as rec.image (BGR uint8, headless only)."""
        return self.finish(self.submit(frame, target_view, hud=hud,
                                       readback_texture=readback_texture))  # fmt: skip

    @property
    def fences(self) -> list:
        """The Fence of each in-flight slot (a frame's wait maps its slot's 16 bytes)."""
        return [slot.fence for slot in self._slots]

    def switch_ready(self) -> bool:
        """A background switch is built: finish the frames in flight, and the next submit()
        swaps it in (set_effect needs nothing in flight)."""
        return self.switching is not None and self.switching.done

    @property
    def overlap_frames(self) -> bool:
        """May a second frame be submitted before the first is finished? Not with
        --results: it reads the effect's result buffers, which the next frame rewrites."""
        return self.results is None

    def submit(self, frame: Frame, target_view, *, hud=None, readback_texture=None) -> InFlight:
        """Record and submit `frame`'s GPU work without waiting for it; finish() waits and
        reads back. Up to IN_FLIGHT frames may be submitted before the oldest is finished
        (in order): frame i+1 is recorded while the GPU runs frame i."""
        if len(self._in_flight) >= IN_FLIGHT:
            raise RuntimeError(f"{IN_FLIGHT} frames in flight: finish() the oldest first")
        if not self._in_flight:
            self._adopt_switch()  # set_effect closes the old effect: nothing may be in flight
        slot = self._slots[self._next_slot]
        self._next_slot = (self._next_slot + 1) % IN_FLIGHT
        rec = FrameRecord(frame.index, frame.t_capture, self.sync)
        c0 = time.thread_time()
        lap = _Laps(rec)
        self.uploader.upload(frame.bgr)
        lap("upload")
        frame_view = self.uploader.view
        # the CPU part first (read-backs, XNNPACK, its own submits), then only recording
        self.effect.prepare(frame_view, self.uploader.host)
        lap("prepare")
        submits, reads = self.effect.frame_counts
        encoder = self.device.create_command_encoder()
        if slot.marks:
            slot.marks.begin(encoder)
        for stage, encode in self.effect.steps(frame_view):
            encode(encoder)
            if slot.marks:
                slot.marks.mark(encoder, stage)
            lap(stage)
        if self.faces is not None:
            self.faces.record(encoder)
        draw_data = hud.prepare(self) if hud is not None else None
        if hud is not None:
            lap("hud")
        # the plain frame under the overlay: copied where the target takes it, not blitted
        copied = self.effect.plain_background and self.uploader.copy_into(
            encoder, target_view.texture
        )
        fmt = self.effect.depth_format  # 3D effects: a depth attachment, this pass only
        depth = {} if fmt is None else {
            "depth_stencil_attachment": self.depth.attachment(self.device,
                                                              target_view.texture.size, fmt)}  # fmt: skip
        rp = encoder.begin_render_pass(color_attachments=[{
            "view": target_view, "clear_value": (0, 0, 0, 1),
            "load_op": "load" if copied else "clear", "store_op": "store"}], **depth)  # fmt: skip
        self.effect.draw(rp, None if copied else frame_view)
        if draw_data is not None:
            if depth:  # the HUD's pipeline has no depth state: a pass of its own
                rp.end()
                rp = encoder.begin_render_pass(color_attachments=[{
                    "view": target_view, "load_op": "load", "store_op": "store"}])  # fmt: skip
            hud.render(draw_data, rp)
        rp.end()
        if slot.marks:
            slot.marks.mark(encoder, "render")
        if readback_texture is not None:
            slot.copy_out(encoder, readback_texture)
        if slot.marks:
            slot.marks.finish(encoder)
        slot.fence.signal(encoder)
        lap("render")
        self.device.queue.submit([encoder.finish()])
        lap("submit")
        pending = InFlight(frame, rec, slot, readback_texture is not None,
                           time.thread_time() - c0, (1 + submits, reads))  # fmt: skip
        self._in_flight.append(pending)
        return pending

    def finish(self, pending: InFlight) -> FrameRecord:
        """Wait for the oldest frame in flight (`pending`) and read back what it asked for."""
        if not self._in_flight or self._in_flight[0] is not pending:
            raise RuntimeError("finish() the frames in the order they were submitted")
        self._in_flight.pop(0)
        rec, slot = pending.rec, pending.slot
        c0 = time.thread_time()
        rec.wait_ms, rec.wait_cpu_ms = slot.fence.wait(self.sync)
        lap = _Laps(rec)
        if slot.marks:
            rec.gpu_ms = slot.marks.read_ms()
        if pending.readback:
            rec.image = slot.read_out(self.images)
            self.frame_readbacks += 1
            lap("readback")
        submits, reads = pending.counts
        if self.results is not None:
            before = self.effect.solution.counts.reading()
            self.results.write(pending.frame.index, self.effect.read_results())
            after = self.effect.solution.counts.reading()
            submits, reads = submits + after[0] - before[0], reads + after[1] - before[1]
            lap("results")
        self.per_frame[(submits, reads)] += 1
        self.last_counts = (submits, reads)
        rec.frame_cpu_ms = (pending.cpu_s + time.thread_time() - c0) * 1e3
        rec.t_done = time.perf_counter()
        if self.switching is not None:
            self.switching.info["frames"].append(rec.t_done)
        return rec

    def drop_in_flight(self) -> list[InFlight]:
        """Forget the frames in flight (their GPU work failed or the run stops); returns
        them, oldest first."""
        dropped, self._in_flight = self._in_flight, []
        return dropped

    # --- figures -----------------------------------------------------------------------
    def transfers(self) -> dict[str, int]:
        eng = [e.stats for e in self.effect.engines.values()]
        solution = self.effect.solution
        frame_reads = getattr(solution.backend.frames, "readbacks", 0)
        return {
            "frame_uploads": self.uploader.uploads,
            "tensor_readbacks": sum(s.readbacks for s in eng),  # engines' run() readbacks
            "engine_uploads": sum(s.uploads for s in eng),
            "timestamp_reads": sum(s.marks.readbacks for s in self._slots if s.marks),
            "fence_maps": sum(s.fence.maps for s in self._slots),
            "frame_readbacks": self.frame_readbacks,
            # the solution's blocking reads of results, and apart the frame read back for
            # the models (the xnnpack backend, given a texture)
            "result_readbacks": solution.readback_maps - frame_reads,
            "face_tally_readbacks": self.faces.readbacks if self.faces else 0,
            "model_frame_readbacks": frame_reads,
            "result_upload_bytes": solution.upload_bytes + self.effect.upload_bytes,
            # per frame: its submits (the frame's own and the solution's) and blocking reads
            # of results, as (submits, reads, frames)
            "per_frame": [list(k) + [n] for k, n in sorted(self.per_frame.items())],
        }

    def models_info(self) -> list[dict]:
        return self.effect.solution.backend.describe()


def make_pipeline(args, ctx, specs, effect: str, size, target_format: str, *,
                  build: bool = True, echo: bool = False) -> FramePipeline:  # fmt: skip
    """The pipeline ar-demo's options ask for (app/options.py), at the --style asked.
    build=False: no effect yet (the window builds it on a worker); echo: the build's
    progress as a line on stderr (headless)."""
    from app.effects import effect_info
    from app.options import default_kernels

    info = effect_info(effect)
    styles = info.styles
    status = BuildStatus(effect, [s.name for s in specs], StartupLine() if echo else None)
    pipeline = FramePipeline(
        ctx, specs, effect, size, target_format, sync=args.sync, precision=args.precision,
        planner=None if args.planner == "best" else args.planner, storage=args.storage,
        kernels=args.kernels or default_kernels(args.headless), backend=args.backend,
        results=getattr(args, "results", None), build=build, status=status,
        style=styles.index(args.style) if args.style in styles else 0,
        effect_options=info.cls.options_from(args),
    )  # fmt: skip
    if build:
        pipeline.timeline.startup["ready"] = since_launch()
    return pipeline
