"""Live mode: a glfw window (rendercanvas) whose wgpu surface is the pipeline's render target.

- input: a FrameSource (camera by default; a video plays in real time), the models
- output: frames presented to the window, HUD on top; a short summary on exit (and --stats)
- start-up: the window opens first and shows the first frame (a camera's live image),
  dimmed, with the build's progress (app/startup.py) while a worker thread builds the
  effect and the HUD and runs each shader once (app/pipeline.py make_effect); the first
  effect frame follows with nothing left to compile
- pacing: a video file plays at its frame rate; frames that are late are dropped, never
  played in slow motion (app/pacing.py); the HUD and the summary count them
- keys: q / Esc quit, s sync sleep <-> spin, h HUD full / mini / off, d dock the HUD
  right / left / free, e next effect style, p next memory planner, f next precision; the
  HUD's sync radio and its planner and precision combos queue the same kind of actions.
  Planner and precision switches rebuild on a worker thread (pipeline.switch): the old
  effect draws until the new one has run once, then they swap between two frames
- usage: `run_window(args, ctx, specs, "segmentation", source, hud_on=True, info={})`

Each draw: (start-up: the start-up screen) or read a frame -> FramePipeline.process()
into the surface texture (one submit, wait per the sync mode) -> rendercanvas presents.
The window ends at the end of a video file, after --frames, on q/Esc or when closed.
"""

from __future__ import annotations

from app.build import Build, BuildStatus, since_launch
from app.errors import AppError

SURFACE_FORMAT = "bgra8unorm"  # not -srgb: the camera bytes are already sRGB-encoded
STARTUP_FPS = 10  # the start-up screen's redraws: leave the CPU to the shader compiler
RUN_FPS = 240
KEYS = {"s": "toggle_sync", "h": "hud", "e": "style", "d": "dock", "p": "next_planner",
        "f": "next_precision"}  # fmt: skip
CANCEL_WAIT_S = 60.0  # a build stops at its next step; the longest seen: one 4 s compile


def run_window(args, ctx, specs, effect: str, source, hud_on: bool, info: dict) -> int:
    from rendercanvas.glfw import loop

    win = LiveWindow(args, ctx, specs, effect, source, hud_on)
    try:
        loop.run()
    except KeyboardInterrupt:
        pass
    finally:
        win.stop()
    if win.error is not None:  # the start-up build failed (ModelError, DeviceError, ...)
        raise win.error
    return win.report(info, args.stats)


class LiveWindow:
    """The window, its start-up build and its frame loop (see the module docstring)."""

    def __init__(self, args, ctx, specs, effect: str, source, hud_on: bool):
        from app.pacing import Pacer
        from app.pipeline import make_pipeline
        from app.startup import StartupView, startup_screen

        self.ctx, self.source, self.effect_name = ctx, source, effect
        self.pipeline = make_pipeline(args, ctx, specs, effect, source.size, SURFACE_FORMAT,
                                      build=False)  # fmt: skip
        self.tl = self.pipeline.timeline
        first = source.read()  # shown during start-up; a video's frame 0 is processed first
        if first is None:
            raise AppError(f"{source.name}: no frame to show")
        self.held = first
        self.paced = source.kind == "video"  # files play in real time; cameras pace themselves
        self.pacer = Pacer(source, held=first) if self.paced else None
        self.hud, self.error, self.done = None, None, False
        self.queued: list[tuple[str, object]] = []
        self.status = BuildStatus(effect, self.pipeline.model_names())
        # the start-up screen's GPU work (upload, blit pipeline) before the window opens, so
        # that its first frame has a picture (0.5 s on lavapipe, unloaded)
        self.startup_view = StartupView(self.pipeline.uploader, SURFACE_FORMAT)
        self.startup_view.prime(startup_screen(first.bgr, self.status))
        dock = getattr(args, "hud_dock", "right")
        self.starting = Build(lambda: self._build(hud_on, dock), self.status)
        self.canvas = self._open()
        self.tl.startup["window_open"] = since_launch()

    def _build(self, hud_on: bool, dock: str):
        """On the worker: the HUD (imgui is not used on the display thread yet) and the
        effect, warmed up."""
        from app.hud import Hud

        hud = Hud(self.ctx.device, SURFACE_FORMAT, self.source.size,
                  adapter=self.ctx.name, dock=dock, features=self.ctx.features)  # fmt: skip
        hud.visible = hud_on
        return self.pipeline.make_effect(status=self.status, hud=hud), hud

    def _open(self):
        from rendercanvas.glfw import RenderCanvas

        try:
            canvas = RenderCanvas(size=self.source.size, title=f"ar-demo: {self.effect_name} "
                                  "(starting)", update_mode="continuous", max_fps=STARTUP_FPS,
                                  vsync=False)  # fmt: skip
        except Exception as exc:
            self.starting.cancel(CANCEL_WAIT_S)
            raise AppError(
                f"cannot open a window ({exc}); use --headless --output OUT.mp4"
            ) from None
        self.context = canvas.get_wgpu_context()
        self.context.configure(device=self.ctx.device, format=SURFACE_FORMAT)
        canvas.add_event_handler(self._on_key, "key_down")
        canvas.add_event_handler(self._on_pointer, "pointer_move", "pointer_down", "pointer_up")
        canvas.add_event_handler(self._on_resize, "resize")
        canvas.request_draw(self.draw)
        return canvas

    # --- events (the loop's thread) ----------------------------------------------------
    def _on_key(self, event) -> None:
        key = event.get("key", "")
        if key in ("q", "Q", "Escape"):
            self.close()
        elif key.lower() in KEYS:
            self.queued.append((KEYS[key.lower()], None))

    def _on_pointer(self, event) -> None:
        if self.hud is not None and self.hud.visible:
            self.hud.pointer(event)

    def _on_resize(self, event) -> None:
        if self.hud is not None:
            self.hud.resize((event["width"], event["height"]))

    def close(self) -> None:
        self.done = True
        self.canvas.close()

    # --- drawing -----------------------------------------------------------------------
    def draw(self) -> None:
        if self.done:
            return
        if not self.pipeline.ready:
            if not self.starting.done:
                self._draw_startup()
                return
            if not self._adopt_startup():
                return
        while self.queued or self.hud.actions:
            self.apply(*(self.queued or self.hud.actions).pop(0))
        frame = self._next_frame()
        if frame is None:
            self.close()
            return
        target = self.context.get_current_texture()
        self.tl.add(self.pipeline.process(frame, target.create_view(), hud=self.hud))
        self.tl.startup.setdefault("first_frame", since_launch())

    def _next_frame(self):
        if self.pacer is not None:
            frame = self.pacer.read()
            self.tl.dropped = self.pacer.dropped
            return frame
        held, self.held = self.held, None
        return held if held is not None and self.source.kind != "camera" else self.source.read()

    def _draw_startup(self) -> None:
        from app.startup import startup_screen

        if self.source.kind == "camera":  # a camera keeps showing live
            self.held = self.source.read() or self.held
        view = self.context.get_current_texture().create_view()
        self.startup_view.show(startup_screen(self.held.bgr, self.status), view)
        self.tl.startup.setdefault("first_content", since_launch())  # presented after this

    def _adopt_startup(self) -> bool:
        if self.starting.error is not None:
            self.error = self.starting.error
            self.close()
            return False
        effect, self.hud = self.starting.result
        self.pipeline.set_effect(effect)
        self.tl.startup["ready"] = since_launch()
        self.canvas.set_update_mode("continuous", max_fps=RUN_FPS)
        self.canvas.set_title(f"ar-demo: {self.effect_name}")
        return True

    def apply(self, action: str, value=None) -> None:
        """A key's or a HUD widget's action, between frames."""
        p, hud = self.pipeline, self.hud
        if action == "sync":
            p.sync = value
        elif action == "toggle_sync":
            p.toggle_sync()
        elif action in ("planner", "precision"):
            p.switch(**{action: value})
        elif action == "next_planner":
            p.switch(planner=_next(hud_planners(p), p.effect.planner))
        elif action == "next_precision":
            p.switch(precision=_next(hud.precisions, p.effect.precision))
        elif action == "style":
            p.effect.cycle_style()
        elif action == "hud":
            hud.cycle_mode()
        elif action == "dock":
            hud.cycle_dock()

    # --- the end -----------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the builds still running (at their next step) and release the source."""
        if self.starting is not None and not self.starting.done:
            self.starting.cancel(CANCEL_WAIT_S)
        self.pipeline.cancel_switch(CANCEL_WAIT_S)
        self.source.close()

    def report(self, info: dict, stats_path: str | None) -> int:
        """Print the summary (and write --stats); the exit code."""
        tl, p = self.tl, self.pipeline
        tl.warmup = min(2, max(0, len(tl.records) - 1))
        if not tl.records:
            return 0
        from app.timeline import format_summary

        s = tl.summary({**info, "backend": p.effect.backend_name, "models": p.models_info(),
                        "transfers": p.transfers(),
                        "title": f"ar-demo window: {self.source.name}", "paced": self.paced})  # fmt: skip
        print(format_summary(s))
        if stats_path:
            import json
            from pathlib import Path

            Path(stats_path).parent.mkdir(parents=True, exist_ok=True)
            Path(stats_path).write_text(json.dumps(s, indent=2) + "\n")
        return 0


def hud_planners(pipeline) -> list[str | None]:
    """The planner choices the HUD offers (None: best)."""
    from app.hud import planner_choices

    return [None, *planner_choices(pipeline.effect.engines.values())]


def _next(choices: list, current):
    return (
        choices[(choices.index(current) + 1) % len(choices)] if current in choices else choices[0]
    )
