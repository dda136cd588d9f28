"""The live loop's parts without a GPU: real-time pacing (a fake clock), the build's
progress as the start-up screen, the headless line and the HUD show it, the HUD's stage
figures (p50 with the worst frame apart) and the run summary's new fields."""

from __future__ import annotations

import io

import numpy as np
import pytest

from app.build import BuildStatus, StartupLine, since_launch
from app.hud import short_adapter, stage_rows
from app.pacing import Pacer
from app.sources import Frame
from app.startup import startup_screen
from app.timeline import FrameRecord, Timeline, format_summary
from engine.gpu.progress import Progress


class FakeSource:
    def __init__(self, count: int, fps: float = 30.0):
        self.count, self.fps, self.index = count, fps, 0

    def read(self):
        if self.index >= self.count:
            return None
        self.index += 1
        return Frame(self.index - 1, np.zeros((2, 2, 3), np.uint8), 0.0)


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        assert s > 0
        self.t += s


def _play(work_s: float, count: int = 90) -> tuple[list[tuple[int, float, float]], Pacer]:
    """Read every frame, spending `work_s` per frame: (index, due, shown) per frame shown."""
    clock, source = FakeClock(), FakeSource(count)
    pacer = Pacer(source, clock=clock, sleep=clock.sleep)
    shown = []
    while (frame := pacer.read()) is not None:
        shown.append((frame.index, frame.t_capture, clock.t))
        clock.t += work_s
    return shown, pacer


@pytest.mark.parametrize("work_ms", [5.0, 33.0, 50.0, 110.0])
def test_pacing_keeps_real_time(work_ms):
    shown, pacer = _play(work_ms / 1e3)
    period = 1 / 30
    t0 = shown[0][1]
    for index, due, at in shown:
        assert due == pytest.approx(t0 + index * period)  # capture time = due time
        assert due - 1e-9 <= at <= due + period + 1e-9  # never early, never a period late
    assert len(shown) + pacer.dropped == 90  # every frame shown or counted
    indices = [i for i, _, _ in shown]
    assert indices == sorted(set(indices))
    if work_ms < 1000 / 30:
        assert pacer.dropped == 0
    else:  # slower than the clip: frames dropped in proportion, playback stays 3 s long
        assert pacer.dropped == pytest.approx(90 * (1 - (1000 / 30) / work_ms), abs=3)
        assert shown[-1][2] - shown[0][2] <= 3.0


def test_pacing_starts_from_a_held_frame():
    clock, source = FakeClock(), FakeSource(10)
    first = source.read()
    clock.t += 5.0  # a long start-up: the held frame 0 still comes first, nothing dropped
    pacer = Pacer(source, held=first, clock=clock, sleep=clock.sleep)
    assert pacer.read() is first and pacer.dropped == 0
    assert pacer.read().index == 1


def _status() -> BuildStatus:
    st = BuildStatus("face-mesh", ["face_detection_short_range", "face_landmark"])
    st(Progress("face_detection_short_range", "graph"))
    st(Progress("face_detection_short_range", "shaders", 12, 39))
    return st


def test_build_status_lines_and_headline():
    st = _status()
    lines = st.model_lines()
    assert lines[0] == ("face_detection_short_range", "compiling shaders 12/39",
                        pytest.approx(12 / 39))  # fmt: skip
    assert lines[1] == ("face_landmark", "waiting", 0.0)
    assert st.headline() == "face_detection_short_range: compiling shaders 12/39"
    assert st.headline(short=True) == "face_detection: shaders 12/39"
    st(Progress("face_detection_short_range", "ready", 39, 39))
    st(Progress("face_landmark", "ready", 33, 33))
    assert st.headline() == "first frame" and st.shaders() == 72
    st.cancel()
    with pytest.raises(Exception, match="face-mesh"):
        st(Progress("face_landmark", "ready", 33, 33))


def test_startup_line_off_a_terminal_prints_phase_changes():
    out = io.StringIO()
    st = BuildStatus("segmentation", ["selfie_segmentation"], echo=StartupLine(out))
    st(Progress("selfie_segmentation", "graph"))
    for k in range(5):
        st(Progress("selfie_segmentation", "shaders", k, 4))
    st.set_stage("done")
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines  # planning, compiling shaders (once), ready
    assert "planning" in lines[0] and "compiling shaders 0/4" in lines[1]
    assert lines[2].startswith("ar-demo: segmentation ready in") and "(4 shaders)" in lines[2]


def test_startup_screen_shows_progress_over_the_dimmed_frame():
    frame = np.full((480, 640, 3), 200, np.uint8)
    img = startup_screen(frame, _status())
    assert img.shape == frame.shape and img is not frame
    assert np.median(img) == 80  # dimmed to 40 %
    title = img[5:45, 10:400].astype(int)  # orange text (BGR 80, 200, 255)
    assert ((title[..., 2] > 200) & (title[..., 1] > 140) & (title[..., 0] < 150)).sum() > 40
    assert (img == 255).any()  # white progress text


def _rec(i: int, ms: float, wait: float = 2.0, sync: str = "sleep") -> FrameRecord:
    r = FrameRecord(i, t_capture=i / 30, sync=sync, wait_ms=wait)
    r.cpu_ms = {"preprocess": ms}
    r.gpu_ms = {"preprocess": 1.0}
    r.t_done = i / 30 + 0.02
    return r


def test_stage_rows_p50_with_the_worst_apart():
    last = [_rec(i, 0.12) for i in range(29)] + [_rec(29, 14.7, wait=301.0)]
    rows = {r[0]: r[1:] for r in stage_rows(last)}
    assert rows["preprocess"] == (pytest.approx(0.12), pytest.approx(1.0), pytest.approx(14.7))
    assert rows["wait"] == (pytest.approx(2.0), None, pytest.approx(301.0))
    tl = Timeline()
    for r in last:
        tl.add(r)
    assert tl.by_sync(30)["sleep"]["wait_ms"] == pytest.approx(2.0)  # not 11.9 (the mean)


def test_summary_has_dropped_frames_and_startup():
    tl = Timeline()
    for i in range(5):
        tl.add(_rec(i, 0.1))
    tl.dropped = 7
    tl.startup = {"window_open": 1.5, "first_content": 1.7, "first_frame": 9.2}
    s = tl.summary()
    assert s["dropped_frames"] == 7 and s["startup_s"]["first_frame"] == 9.2
    text = format_summary(s)
    assert "dropped 7 video frames" in text and "first frame 9.20" in text


def test_short_adapter_and_launch_clock():
    assert short_adapter("llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)") == "llvmpipe (Vulkan)"
    assert short_adapter("Apple M2 (Metal)") == "Apple M2 (Metal)"
    assert 0 < since_launch() < 24 * 3600
