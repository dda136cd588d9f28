"""Live mode: a glfw window (rendercanvas) whose wgpu surface is the pipeline's render target.

- input: a FrameSource (camera by default; a video plays at its own frame rate), the pipeline
- output: frames presented to the window, HUD on top; a short summary on exit
- keys: q / Esc quit, s sync sleep <-> spin, h HUD on/off, e next effect style; the HUD's
  own widgets (sync radio, planner combo) queue the same kind of actions
- usage: `run_window(args, ctx, specs, "segmentation", source, hud_on=True, info={})`

Each draw: read a frame -> FramePipeline.process() into the surface texture (one submit,
wait per the sync mode) -> rendercanvas presents. The window ends at the end of a video
file, after --frames, on q/Esc or when closed.
"""

from __future__ import annotations

import time

SURFACE_FORMAT = "bgra8unorm"  # not -srgb: the camera bytes are already sRGB-encoded


def run_window(args, ctx, specs, effect: str, source, hud_on: bool, info: dict) -> int:
    from rendercanvas.glfw import RenderCanvas, loop

    from app.errors import AppError
    from app.hud import Hud
    from app.pipeline import make_pipeline

    try:
        canvas = RenderCanvas(size=source.size, title=f"ar-demo: {effect}",
                              update_mode="continuous", max_fps=240, vsync=False)  # fmt: skip
    except Exception as exc:
        raise AppError(f"cannot open a window ({exc}); use --headless --output OUT.mp4") from None
    context = canvas.get_wgpu_context()
    context.configure(device=ctx.device, format=SURFACE_FORMAT)
    pipeline = make_pipeline(args, ctx, specs, effect, source.size, SURFACE_FORMAT)
    hud = Hud(ctx.device, SURFACE_FORMAT, canvas.get_logical_size(), adapter=ctx.name)
    hud.visible = hud_on
    paced = source.kind == "video"  # files play at their frame rate, cameras pace themselves
    state = {"t0": None, "done": False, "code": 0}

    def apply(action, value=None):
        if action == "sync":
            pipeline.sync = value
        elif action == "toggle_sync":
            pipeline.toggle_sync()
        elif action == "planner":
            pipeline.set_planner(value)
        elif action == "style":
            pipeline.effect.cycle_style()
        elif action == "hud":
            hud.visible = not hud.visible

    keys = {"s": "toggle_sync", "h": "hud", "e": "style"}

    @canvas.add_event_handler("key_down")
    def on_key(event):
        key = event.get("key", "")
        if key in ("q", "Q", "Escape"):
            state["done"] = True
            canvas.close()
        elif key.lower() in keys:
            hud.actions.append((keys[key.lower()], None))

    @canvas.add_event_handler("pointer_move", "pointer_down", "pointer_up")
    def on_pointer(event):
        if hud.visible:
            hud.pointer(event)

    @canvas.add_event_handler("resize")
    def on_resize(event):
        hud.resize((event["width"], event["height"]))

    def draw():
        if state["done"]:
            return
        while hud.actions:
            apply(*hud.actions.pop(0))
        frame = source.read()
        if frame is None:
            state["done"] = True
            canvas.close()
            return
        if paced:
            if state["t0"] is None:
                state["t0"] = time.perf_counter()
            delay = state["t0"] + frame.index / source.fps - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
                frame.t_capture = time.perf_counter()  # the frame is "captured" when due
        target = context.get_current_texture()
        rec = pipeline.process(frame, target.create_view(), hud=hud)
        pipeline.timeline.add(rec)

    canvas.request_draw(draw)
    try:
        loop.run()
    except KeyboardInterrupt:
        pass
    finally:
        source.close()
    tl = pipeline.timeline
    tl.warmup = min(2, max(0, len(tl.records) - 1))
    if tl.records:
        from app.stats import format_summary

        s = tl.summary({**info, "models": pipeline.models_info(), "transfers": pipeline.transfers(),
                        "title": f"ar-demo window: {source.name}"})  # fmt: skip
        print(format_summary(s))
        if args.stats:
            import json
            from pathlib import Path

            Path(args.stats).parent.mkdir(parents=True, exist_ok=True)
            Path(args.stats).write_text(json.dumps(s, indent=2) + "\n")
    return state["code"]
