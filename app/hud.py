"""The HUD: Dear ImGui (imgui-bundle) drawn in the frame's own render pass.

- input: the pipeline (timeline, effect, engines, sync mode, transfers) once per frame
- output: imgui draw data rendered by wgpu's imgui backend into the same render pass as
  the frame (no extra submit); works on a window surface and on an offscreen texture, so
  headless `--hud` burns the same HUD into the video
- shows: adapter; capture -> present latency and FPS with a plot of the last seconds;
  CPU and GPU ms per stage; sync mode toggle with wait and CPU ms per frame for each mode;
  memory plan (strategy, bytes, naive, lower bound, objects) with a live planner switch;
  dispatches; precision; host transfers
- usage: `hud = Hud(device, "bgra8unorm", (640, 480))`; the pipeline calls
  `draw_data = hud.prepare(pipeline)` then `hud.render(draw_data, render_pass)`;
  `hud.actions` holds what the widgets asked for (applied between frames by the owner)
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from engine.memory.registry import PLANNERS

PLOT_SECONDS = 5.0
STAGE_ROWS = ("upload", "preprocess", "inference", "postprocess", "render", "hud", "wait")


class Hud:
    def __init__(self, device, target_format: str, size: tuple[int, int], adapter: str = ""):
        from imgui_bundle import imgui
        from wgpu.utils.imgui import ImguiWgpuBackend

        self.imgui = imgui
        self.context = imgui.create_context()
        imgui.set_current_context(self.context)
        self.backend = ImguiWgpuBackend(device, target_format)
        self.io = imgui.get_io()
        self.io.display_size = size
        self.io.display_framebuffer_scale = (1.0, 1.0)
        imgui.style_colors_dark()
        style = imgui.get_style()
        style.font_scale_main = 0.85  # fits a 640x480 frame
        style.window_padding = (6, 4)
        style.item_spacing = (4, 2)
        self.adapter = adapter
        self.visible = True
        self.actions: list[tuple[str, object]] = []
        self._t_last = time.perf_counter()

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
        if self.visible:
            self._widgets(pipeline)
        imgui.render()
        return imgui.get_draw_data()

    def render(self, draw_data, render_pass) -> None:
        imgui = self.imgui
        imgui.set_current_context(self.context)
        self.backend.render(draw_data, render_pass)

    def _widgets(self, p) -> None:
        imgui = self.imgui
        tl, eff = p.timeline, p.effect
        imgui.set_next_window_pos((6, 6), imgui.Cond_.first_use_ever)
        imgui.set_next_window_bg_alpha(0.5)
        flags = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_focus_on_appearing
        imgui.begin("webgpu-ar HUD (h)", None, flags)
        imgui.text(self.adapter)
        imgui.text(f"{eff.name} / {eff.style_name} (e)  {eff.precision}")
        recent = list(tl.recent)
        now = recent[-1].t_done if recent else 0.0
        lat = np.array([r.latency_ms for r in recent if now - r.t_done <= PLOT_SECONDS], np.float32)
        cur = float(np.median(lat[-15:])) if lat.size else 0.0
        imgui.text_colored(
            (0.4, 1.0, 0.4, 1.0), f"capture->present {cur:5.1f} ms  {tl.fps():5.1f} FPS"
        )
        if lat.size:
            imgui.plot_lines("##lat", lat, overlay_text=f"latency, last {PLOT_SECONDS:.0f} s",
                             scale_min=0.0, scale_max=float(max(np.percentile(lat, 95) * 1.5, 1.0)),
                             graph_size=(250, 36))  # fmt: skip
        last = recent[-30:]
        if last and imgui.begin_table("stages", 3, imgui.TableFlags_.sizing_fixed_fit):
            for h in ("ms (30 frames)", "CPU", "GPU"):
                imgui.table_setup_column(h)
            imgui.table_headers_row()
            for stage in STAGE_ROWS:
                if stage == "wait":
                    cpu, gpu = np.mean([r.wait_ms for r in last]), None
                else:
                    cs = [r.cpu_ms[stage] for r in last if stage in r.cpu_ms]
                    gs = [r.gpu_ms[stage] for r in last if stage in r.gpu_ms]
                    if not cs and not gs:
                        continue
                    cpu = np.mean(cs) if cs else None
                    gpu = np.mean(gs) if gs else None
                imgui.table_next_row()
                for i, v in enumerate((stage, cpu, gpu)):
                    imgui.table_set_column_index(i)
                    imgui.text(v if isinstance(v, str) else ("-" if v is None else f"{v:6.2f}"))
            imgui.end_table()
        imgui.text("sync (s):")
        for mode in ("sleep", "spin"):
            imgui.same_line()
            if imgui.radio_button(mode, p.sync == mode) and p.sync != mode:
                self.actions.append(("sync", mode))
        for mode, v in tl.by_sync().items():
            imgui.text(f" {mode:5} wait {v['wait_ms']:5.1f}  CPU {v['wait_cpu_ms']:5.1f} ms, "
                       f"CPU/frame {v['frame_cpu_ms']:5.1f} ms")  # fmt: skip
        for e in eff.engines.values():
            m = e.memory
            imgui.text(f"{Path(e.graph.name).stem}: {e.dispatch_count} dispatches")
            imgui.text(f" {m.strategy} {m.total_bytes / 1e6:.2f} MB, naive {m.naive_bytes / 1e6:.2f}, "
                       f"bound {m.lower_bound / 1e6:.2f}, {m.objects} obj")  # fmt: skip
        current = p.effect.planner or "best"
        imgui.set_next_item_width(140)
        if imgui.begin_combo("planner", current):
            for name in ("best", *planner_choices(eff.engines.values())):
                clicked, _ = imgui.selectable(name, name == current)
                if clicked and name != current:
                    self.actions.append(("planner", None if name == "best" else name))
            imgui.end_combo()
        t = p.transfers()
        n = max(1, t["frame_uploads"])
        imgui.text(f"per frame: {t['frame_uploads'] / n:.0f} upload, "
                   f"{t['tensor_readbacks'] / n:.0f} tensor readbacks")  # fmt: skip
        imgui.text_disabled("q/Esc quit  s sync  h HUD  e style")
        imgui.end()


def planner_choices(engines) -> list[str]:
    """The planners that plan every storage kind these engines use (the registry says which
    kinds each plans): a switch that cannot apply is not offered."""
    kinds = {e.storage for e in engines}
    return [name for name, p in PLANNERS.items() if kinds <= set(p.kinds)]
