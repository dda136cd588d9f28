"""The HUD: Dear ImGui (imgui-bundle) drawn in the frame's own render pass.

- input: the pipeline (timeline, effect, engines, sync mode, transfers, a switch in
  progress) once per frame
- output: imgui draw data rendered by wgpu's imgui backend into the same render pass as
  the frame (no extra submit); works on a window surface and on an offscreen texture, so
  headless `--hud` burns the same HUD into the video
- shows (full): adapter; effect, style, precision, kernel set; FPS, capture -> present latency p50 and
  dropped frames with a plot of the last seconds; per stage CPU and GPU ms as the p50 of
  the last 60 frames with the worst frame's apart ("max"); sync mode with wait / CPU p50
  per mode; the memory plan per model; planner and precision switches (rebuilt in the
  background: the line under them says how far, or why it failed); transfers per frame
- modes (h): full -> mini (one line: FPS, latency, dropped) -> off; dock (d): right ->
  left -> free (drag it by its title); 200 px wide, at the side, not over the centre
- usage: `hud = Hud(device, "bgra8unorm", (640, 480))`; the pipeline calls
  `draw_data = hud.prepare(pipeline)` then `hud.render(draw_data, render_pass)`;
  `hud.actions` holds what the widgets asked for (applied between frames by the owner)
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np

from engine.memory import PLANNERS
from engine.precision import PRECISIONS

PLOT_SECONDS = 5.0
STAGE_WINDOW = 60  # frames behind each p50 / max: 2 s at 30 fps
STAGE_ROWS = ("upload", "preprocess", "inference", "postprocess", "render", "hud", "wait")
MODES = ("full", "mini", "off")
DOCKS = ("right", "left", "free")
WIDTH = 200  # px: 32 characters of the 0.85-scaled default font; the right 3/10 of 640
MARGIN = 6
KEYS_HELP = (
    "q/Esc quit, s sync sleep/spin, h HUD full/mini/off, d dock right/left/free, "
    "e effect style, p next planner, f next precision"
)
HEADLINE_HELP = (
    "frames drawn per second; capture -> present latency, p50 of the last 15 "
    "frames; video frames dropped to keep real time"
)
GREEN, YELLOW, RED = (0.4, 1.0, 0.4, 1.0), (1.0, 0.85, 0.3, 1.0), (1.0, 0.45, 0.4, 1.0)


class Hud:
    def __init__(self, device, target_format: str, size: tuple[int, int], adapter: str = "",
                 dock: str = "right", features=()):  # fmt: skip
        from imgui_bundle import imgui
        from wgpu.utils.imgui import ImguiWgpuBackend

        if dock not in DOCKS:
            raise ValueError(f"dock must be one of {DOCKS}, not {dock!r}")
        self.imgui = imgui
        self.context = imgui.create_context()
        imgui.set_current_context(self.context)
        self.backend = ImguiWgpuBackend(device, target_format)
        self.io = imgui.get_io()
        self.io.set_ini_filename(None)  # no imgui.ini in the working directory
        self.io.display_size = size
        self.io.display_framebuffer_scale = (1.0, 1.0)
        imgui.style_colors_dark()
        style = imgui.get_style()
        style.font_scale_main = 0.85  # fits a 640x480 frame
        style.window_padding = (6, 4)
        style.item_spacing = (4, 2)
        style.frame_padding = (4, 1)
        self.adapter = short_adapter(adapter)
        self.mode, self.dock = "full", dock
        self.precisions = [n for n, p in PRECISIONS.items()
                           if p.device_feature is None or p.device_feature in features]  # fmt: skip
        self.actions: list[tuple[str, object]] = []
        self._t_last = time.perf_counter()

    # --- modes -------------------------------------------------------------------------
    @property
    def visible(self) -> bool:
        return self.mode != "off"

    @visible.setter
    def visible(self, on: bool) -> None:
        self.mode = "full" if on else "off"

    def cycle_mode(self) -> str:
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        return self.mode

    def cycle_dock(self) -> str:
        self.dock = DOCKS[(DOCKS.index(self.dock) + 1) % len(DOCKS)]
        return self.dock

    def resize(self, size: tuple[int, int]) -> None:
        self.io.display_size = size

    # --- input (window mode) -----------------------------------------------------------
    def pointer(self, event: dict) -> bool:
        """Feed a rendercanvas pointer event; True when the HUD wants the mouse."""
        imgui = self.imgui
        imgui.set_current_context(self.context)
        self.io.add_mouse_pos_event(event["x"], event["y"])
        kind = event["event_type"]
        if kind in ("pointer_down", "pointer_up"):
            self.io.add_mouse_button_event(
                max(0, event.get("button", 1) - 1), kind == "pointer_down"
            )
        return bool(self.io.want_capture_mouse)

    # --- per frame -----------------------------------------------------------------------
    def prepare(self, pipeline):
        """Build this frame's widgets; returns the draw data for render()."""
        imgui = self.imgui
        imgui.set_current_context(self.context)
        now = time.perf_counter()
        self.io.delta_time = max(1e-4, now - self._t_last)
        self._t_last = now
        imgui.new_frame()
        if self.mode == "full":
            self._full(pipeline)
        elif self.mode == "mini":
            self._mini(pipeline)
        imgui.render()
        return imgui.get_draw_data()

    def render(self, draw_data, render_pass) -> None:
        imgui = self.imgui
        imgui.set_current_context(self.context)
        self.backend.render(draw_data, render_pass)

    def warm(self, render_pass) -> None:
        """Draw a throw-away frame (start-up warm-up: the backend's pipeline compiles)."""
        imgui = self.imgui
        imgui.set_current_context(self.context)
        imgui.new_frame()
        imgui.begin("warm-up")
        imgui.text("warming up")
        imgui.end()
        imgui.render()
        self.backend.render(imgui.get_draw_data(), render_pass)

    # --- layout --------------------------------------------------------------------------
    def _place(self, flags: int) -> int:
        """Dock the next window at the side (or leave it where it was dragged)."""
        imgui = self.imgui
        w = self.io.display_size[0]
        if self.dock == "free":
            imgui.set_next_window_pos((w - WIDTH - MARGIN, MARGIN), imgui.Cond_.first_use_ever)
            return flags
        x, pivot = (w - MARGIN, (1.0, 0.0)) if self.dock == "right" else (MARGIN, (0.0, 0.0))
        imgui.set_next_window_pos((x, MARGIN), imgui.Cond_.always, pivot)
        return flags | imgui.WindowFlags_.no_move

    def _mini(self, p) -> None:
        imgui = self.imgui
        wf = imgui.WindowFlags_
        flags = self._place(wf.no_title_bar | wf.always_auto_resize | wf.no_inputs
                            | wf.no_focus_on_appearing)  # fmt: skip
        imgui.set_next_window_bg_alpha(0.45)
        imgui.begin("##hud-mini", None, flags)
        imgui.text_colored(GREEN, _headline(p.timeline))
        if p.switching is not None:
            imgui.text_colored(YELLOW, f"-> {p.switching.status.what}")
        imgui.end()

    def _full(self, p) -> None:
        imgui = self.imgui
        tl, eff = p.timeline, p.effect
        wf = imgui.WindowFlags_
        flags = self._place(wf.always_auto_resize | wf.no_focus_on_appearing)
        imgui.set_next_window_bg_alpha(0.5)
        imgui.set_next_window_size_constraints((WIDTH, 0), (WIDTH, 10_000))
        imgui.begin(f"ar-demo (h, d: {self.dock})###hud", None, flags)
        imgui.text_disabled(self.adapter[:34])
        imgui.text(f"{eff.name}/{eff.style_name}  {eff.precision}  {eff.backend_name}")
        imgui.text_disabled(f"{eff.kernels} kernels")
        imgui.text_colored(GREEN, _headline(tl))
        imgui.set_item_tooltip(HEADLINE_HELP)
        recent = list(tl.recent)
        now = recent[-1].t_done if recent else 0.0
        lat = np.array([r.latency_ms for r in recent if now - r.t_done <= PLOT_SECONDS], np.float32)
        if lat.size:
            top = float(max(np.percentile(lat, 95) * 1.5, 1.0))
            imgui.plot_lines("##lat", lat, overlay_text=f"latency, {PLOT_SECONDS:.0f} s",
                             scale_min=0.0, scale_max=top, graph_size=(WIDTH - 12, 30))  # fmt: skip
        self._stages(recent[-STAGE_WINDOW:])
        self._sync(p)
        for e in eff.engines.values():
            m = e.memory
            imgui.text(f"{Path(e.graph.name).stem[:13]} {m.strategy[:12]} "
                       f"{m.total_bytes / 1e6:.1f}MB")  # fmt: skip
            imgui.set_item_tooltip(f"{Path(e.graph.name).stem}: {e.dispatch_count} dispatches; "
                                   f"memory {m.strategy} {m.total_bytes / 1e6:.2f} MB, naive "
                                   f"{m.naive_bytes / 1e6:.2f} MB, lower bound "
                                   f"{m.lower_bound / 1e6:.2f} MB, {m.objects} objects")  # fmt: skip
        self._switches(p)
        submits, reads = p.last_counts  # the last frame's, the solution's own included
        imgui.text_disabled(f"{submits} submit{'s' if submits != 1 else ''}, {reads} "
                            f"read{'s' if reads != 1 else ''} / frame")  # fmt: skip
        imgui.set_item_tooltip("the last frame's queue submits and blocking reads of "
                               "results, the solution's own included (--stats: per_frame)")  # fmt: skip
        imgui.text_disabled("keys: q s h d e p f")
        imgui.set_item_tooltip(KEYS_HELP)
        imgui.end()

    def _stages(self, last) -> None:
        imgui = self.imgui
        if not last or not imgui.begin_table("stages", 4, imgui.TableFlags_.sizing_fixed_fit):
            return
        for h in (f"p50 of {len(last)}", "CPU", "GPU", "max"):
            imgui.table_setup_column(h)
        imgui.table_headers_row()
        for stage, cpu, gpu, worst in stage_rows(last):
            imgui.table_next_row()
            for i, v in enumerate((stage, cpu, gpu)):
                imgui.table_set_column_index(i)
                imgui.text(v if isinstance(v, str) else _ms(v))
            imgui.table_set_column_index(3)
            imgui.text_disabled(_ms(worst))
        imgui.end_table()

    def _sync(self, p) -> None:
        imgui = self.imgui
        imgui.text("sync (s):")
        for mode in ("sleep", "spin"):
            imgui.same_line()
            if imgui.radio_button(mode, p.sync == mode) and p.sync != mode:
                self.actions.append(("sync", mode))
        for mode, v in p.timeline.by_sync(STAGE_WINDOW).items():
            imgui.text(f" {mode}: wait {v['wait_ms']:.1f} CPU {v['wait_cpu_ms']:.1f}"
                       f"/{v['frame_cpu_ms']:.1f}")  # fmt: skip
            imgui.set_item_tooltip("p50 ms: wait for the GPU, CPU while waiting / CPU per frame")

    def _switches(self, p) -> None:
        """Planner and precision combos; the switch runs in the background (switch())."""
        imgui = self.imgui
        eff = p.effect
        busy = p.switching is not None and p.switching is not p.staged_switch  # else queued
        current = eff.planner or "best"
        imgui.set_next_item_width(104)
        if imgui.begin_combo("##planner", f"plan: {current}"):
            for name in ("best", *planner_choices(eff.engines.values())):
                clicked, _ = imgui.selectable(name, name == current)
                if clicked and name != current and not busy:
                    self.actions.append(("planner", None if name == "best" else name))
            imgui.end_combo()
        imgui.same_line()
        imgui.set_next_item_width(WIDTH - 120)
        if imgui.begin_combo("##precision", eff.precision):
            for name in self.precisions:
                clicked, _ = imgui.selectable(name, name == eff.precision)
                if clicked and name != eff.precision and not busy:
                    self.actions.append(("precision", name))
            imgui.end_combo()
        if busy:
            s = p.switching.status
            imgui.text_colored(YELLOW, f"-> {s.what} ({s.seconds:.1f} s)")
            imgui.text_colored(YELLOW, f" {s.headline(short=True)}"[:33])
        elif p.switch_error:
            imgui.text_colored(RED, p.switch_error[:33])
            imgui.set_item_tooltip(p.switch_error)


def _ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:5.2f}" if v < 10 else f"{v:5.1f}" if v < 1000 else f"{v:5.0f}"


def _headline(tl) -> str:
    """FPS, latency p50 (last 15 frames) and dropped frames, on one line."""
    recent = list(tl.recent)[-15:]
    lat = float(np.median([r.latency_ms for r in recent])) if recent else 0.0
    line = f"{tl.fps():4.1f} FPS  {lat:5.1f} ms"
    if tl.dropped:
        line += f"  drop {tl.dropped}"
    return line


def stage_rows(last) -> list[tuple[str, float | None, float | None, float]]:
    """(stage, CPU p50, GPU p50, worst CPU or GPU ms) over the records `last`; "wait" is
    the wall time waiting for the GPU."""
    rows = []
    for stage in STAGE_ROWS:
        if stage == "wait":
            cs, gs = [r.wait_ms for r in last], []
        else:
            cs = [r.cpu_ms[stage] for r in last if stage in r.cpu_ms]
            gs = [r.gpu_ms[stage] for r in last if stage in r.gpu_ms]
        if not cs and not gs:
            continue
        cpu = float(np.median(cs)) if cs else None
        gpu = float(np.median(gs)) if gs else None
        rows.append((stage, cpu, gpu, float(max(cs + gs))))
    return rows


def planner_choices(engines) -> list[str]:
    """The planners that plan every storage kind these engines use (the registry says which
    kinds each plans): a switch that cannot apply is not offered."""
    kinds = {e.storage for e in engines}
    return [name for name, p in PLANNERS.items() if kinds <= set(p.kinds)]


def short_adapter(name: str) -> str:
    """The adapter's name without the driver's details in the middle: "llvmpipe (LLVM
    15.0.6, 256 bits) (Vulkan)" -> "llvmpipe (Vulkan)"."""
    parts = re.split(r" (?=\()", name)
    return " ".join(parts[:1] + parts[-1:]) if len(parts) > 2 else name
