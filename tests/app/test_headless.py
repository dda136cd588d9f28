"""Headless end-to-end on the sample clip, per effect: the output video has every frame,
differs from the input where the overlay is and matches it elsewhere."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from app.cli import main
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import frame_diff, read_video, reference_faces, reference_mask, sample_clip

gpu_context()  # skips the module without an adapter
FRAMES = 20
CHECKED = (0, 9, 19)
# mp4v re-encoding: unchanged regions stay within a few levels of the input
SAME = 6.0


def _headless(tmp_path, models, *extra):
    tmp_path.mkdir(parents=True, exist_ok=True)
    out, stats = tmp_path / "out.mp4", tmp_path / "stats.json"
    args = [a for m in models for a in ("--model", str(model_file(m)))]
    code = main([*args, "--input", str(sample_clip()), "--headless", "--output", str(out),
                 "--frames", str(FRAMES), "--stats", str(stats), "--no-progress",
                 *extra, *(() if "--backend" in extra else ("--backend", "webgpu"))])  # fmt: skip
    assert code == 0
    summary = json.loads(stats.read_text())
    got = read_video(out)
    want = read_video(sample_clip(), FRAMES)
    assert len(got) == len(want) == FRAMES == summary["frames_written"] == summary["frames_read"]
    assert summary["failed_frames"] == [] and summary["transfers"]["tensor_readbacks"] == 0
    return got, want, summary


@pytest.mark.parametrize("backend", ["webgpu", "xnnpack"])
def test_segmentation_replaces_the_background(tmp_path, backend):
    if backend == "xnnpack":
        pytest.importorskip("ai_edge_litert.interpreter")
    got, want, summary = _headless(tmp_path, ["selfie_segmentation"], "--style", "replace",
                                   "--backend", backend)  # fmt: skip
    assert summary["backend"] == backend
    graph = __import__("engine").load_tflite(model_file("selfie_segmentation"))
    for i in CHECKED:
        mask = cv2.resize(
            reference_mask(graph, want[i]), (640, 480), interpolation=cv2.INTER_LINEAR
        )
        kernel = np.ones((15, 15), np.uint8)
        person = cv2.erode((mask > 0.9).astype(np.uint8), kernel).astype(bool)
        background = cv2.erode((mask < 0.1).astype(np.uint8), kernel).astype(bool)
        assert person.sum() > 20_000 and background.sum() > 20_000
        d = frame_diff(got[i], want[i])
        assert np.median(d[person]) < SAME, np.median(d[person])
        assert np.median(d[background]) > 25, np.median(d[background])
    assert summary["effect"] == "segmentation" and summary["fps"] > 0


@pytest.mark.parametrize("backend", ["webgpu", "xnnpack"])
def test_face_detection_draws_the_box(tmp_path, backend):
    if backend == "xnnpack":
        pytest.importorskip("ai_edge_litert.interpreter")
    got, want, summary = _headless(tmp_path, ["face_detection_short_range"], "--style", "box",
                                   "--backend", backend)  # fmt: skip
    assert summary["backend"] == backend
    if backend == "xnnpack":  # the frame read back for the model, the records uploaded
        t = summary["transfers"]
        # the models read the decoded frame; only the warm-up frame reads the texture back
        assert t["model_frame_readbacks"] == 1
        assert t["result_upload_bytes"] > 0 and t["result_readbacks"] == 0
        assert summary["models"][0]["backend"] == "xnnpack"
    graph = __import__("engine").load_tflite(model_file("face_detection_short_range"))
    for i in CHECKED:
        faces = reference_faces(graph, want[i])
        assert len(faces) == 1
        x0, y0, x1, y1 = faces.boxes[0]
        d = frame_diff(got[i], want[i])
        # on the outline: the middle half of each edge, the line is 3 px wide
        xs = np.linspace(x0 + (x1 - x0) / 4, x1 - (x1 - x0) / 4, 20).astype(int)
        ys = np.linspace(y0 + (y1 - y0) / 4, y1 - (y1 - y0) / 4, 20).astype(int)
        edges = np.concatenate([d[int(round(y0)), xs], d[int(round(y1)), xs],
                                d[ys, int(round(x0))], d[ys, int(round(x1))]])  # fmt: skip
        assert np.median(edges) > 40, edges
        # elsewhere: away from the box by 12 px
        away = np.ones(d.shape, bool)
        away[max(0, int(y0) - 12) : int(y1) + 12, max(0, int(x0) - 12) : int(x1) + 12] = False
        assert np.median(d[away]) < SAME and np.percentile(d[away], 99) < 25


def test_face_mesh_draws_points_on_the_face(tmp_path):
    got, want, summary = _headless(
        tmp_path, ["face_detection_short_range", "face_landmark"], "--style", "points"
    )
    graph = __import__("engine").load_tflite(model_file("face_detection_short_range"))
    for i in CHECKED:
        (x0, y0, x1, y1) = reference_faces(graph, want[i]).boxes[0]
        d = frame_diff(got[i], want[i])
        cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0)
        inside = d[
            max(0, int(cy - r / 2)) : int(cy + r / 2), max(0, int(cx - r / 2)) : int(cx + r / 2)
        ]
        assert (inside > 60).sum() > 300  # 468 points of ~3 px
        away = np.ones(d.shape, bool)
        away[max(0, int(cy - r)) : int(cy + r), max(0, int(cx - r)) : int(cx + r)] = False
        assert np.median(d[away]) < SAME and np.percentile(d[away], 99) < 25
    assert [m["role"] for m in summary["models"]] == ["detection", "landmarks"]


def test_hud_is_burnt_in_and_stats_have_percentiles(tmp_path):
    got, want, summary = _headless(tmp_path, ["face_detection_short_range"], "--hud",
                                   "--sync", "spin")  # fmt: skip
    d = frame_diff(got[-1], want[-1])
    assert np.median(d[10:200, -200:-10]) > 15  # the HUD panel, docked right
    assert np.median(d[:, 180:420]) < SAME  # not over the centre of the frame
    assert summary["hud"] is True and summary["sync"] == "spin"
    for stage in ("upload", "preprocess", "inference", "postprocess", "render"):
        assert set(summary["cpu_ms"][stage]) >= {"p50", "p90", "p99"}
    assert summary["latency_ms"]["p50"] > 0 and summary["models"][0]["memory"]["total_bytes"] > 0


@pytest.mark.parametrize("planner", ["greedy"])
def test_still_image_planner_and_fp16(tmp_path, planner):
    from tests.helpers.files import ASSETS_DIR

    still = ASSETS_DIR / "astronaut.png"
    if not still.exists():
        pytest.skip("astronaut.png missing: run `make assets`")
    out = tmp_path / "still.mp4"
    code = main(["--model", str(model_file("selfie_segmentation")), "--input", str(still),
                 "--headless", "--output", str(out), "--frames", "3", "--planner", planner,
                 "--precision", "fp16", "--no-progress", "--backend", "webgpu"])  # fmt: skip
    assert code == 0 and len(read_video(out)) == 3


def test_ctrl_c_finishes_the_file(tmp_path):
    """SIGINT mid-run: exit 130, the summary says so, the video written so far plays."""
    import signal

    from tests.helpers.paused import start_paused

    out = tmp_path / "cut.mp4"
    proc = start_paused(["--model", str(model_file("selfie_segmentation")), "--input",
                         str(sample_clip()), "--headless", "--output", str(out),
                         "--no-progress"])  # fmt: skip
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr[-2000:]
    assert "interrupted" in stdout
    frames = read_video(out)
    assert 0 < len(frames) < 300


def test_irises_style_draws_the_refined_irises(tmp_path):
    """--refine-landmarks --style irises: face_landmark_with_attention's iris rings (orange)
    around the irises FaceMesh(refine_landmarks=True) finds on the same frames."""
    from engine.vision import FaceMesh

    models = ["face_detection_short_range", "face_landmark_with_attention"]
    got, want, summary = _headless(tmp_path, models, "--style", "irises")
    assert [m["name"] for m in summary["models"]][1] == "face_landmark_with_attention"
    with FaceMesh(refine_landmarks=True, bgr=True) as mesh:
        faces = [mesh.process(frame, round(i * 1000 / 30)).faces for i, frame in
                 enumerate(want)]  # fmt: skip
    for i in CHECKED:
        (face,) = faces[i]
        b, g, r = (got[i][..., c].astype(int) for c in range(3))
        drawn = frame_diff(got[i], want[i]) > 40  # not the suit's orange: what was drawn
        orange = drawn & (r > 180) & (g > 60) & (g < 170) & (b < 110)
        for centre in (468, 473):  # each iris's centre landmark
            x, y = face.landmarks_px[centre, :2].round().astype(int)
            ring = orange[y - 8 : y + 9, x - 8 : x + 9]
            assert ring.sum() >= 12, (i, centre, int(ring.sum()))
        assert orange.sum() < 1500  # only the two small rings are that colour


@pytest.mark.parametrize("backend", ["webgpu", "xnnpack"])
def test_overlapped_frames_write_the_same_file_as_one_at_a_time(tmp_path, monkeypatch, backend):
    """Decoding ahead and encoding behind on threads (engine/vision/read_ahead.py,
    app/frame_workers.py) and two frames on the GPU at once (app/pipeline.py submit/finish)
    give the file the loop gives when it reads, renders, waits and writes one frame at a
    time, byte for byte."""
    if backend == "xnnpack":
        pytest.importorskip("ai_edge_litert.interpreter")
    from app.pipeline import FramePipeline
    from benchmarks.app.one_at_a_time import one_at_a_time

    events = []  # ("submit" | "finish", frame index), in call order
    submit, finish = FramePipeline.submit, FramePipeline.finish

    def logged_submit(self, frame, *args, **kwargs):
        events.append(("submit", frame.index))
        return submit(self, frame, *args, **kwargs)

    def logged_finish(self, pending):
        events.append(("finish", pending.frame.index))
        return finish(self, pending)

    monkeypatch.setattr(FramePipeline, "submit", logged_submit)
    monkeypatch.setattr(FramePipeline, "finish", logged_finish)
    models = ["face_detection_short_range", "face_landmark"]
    threaded, _, summary = _headless(tmp_path / "threads", models, "--backend", backend)
    # frame i+1 was submitted before frame i was waited for
    assert events.index(("submit", 1)) < events.index(("finish", 0))
    assert events.index(("submit", FRAMES - 1)) < events.index(("finish", FRAMES - 2))

    one_at_a_time(monkeypatch.setattr)
    inline, _, _ = _headless(tmp_path / "inline", models, "--backend", backend)
    assert summary["backend"] == backend
    assert (tmp_path / "threads/out.mp4").read_bytes() == (tmp_path / "inline/out.mp4").read_bytes()
    assert all(np.array_equal(a, b) for a, b in zip(threaded, inline, strict=True))


def test_image_pool_reuses_what_is_given_back():
    """The first take makes the pool's KEEP arrays; an array given back is taken again;
    past KEEP, new arrays, dropped when given back; another shape starts anew."""
    from app.pipeline import ImagePool

    pool = ImagePool()
    first = [pool.take((4, 6, 3)) for _ in range(ImagePool.KEEP)]
    extra = pool.take((4, 6, 3))  # none left: a new one
    assert len({id(a) for a in [*first, extra]}) == ImagePool.KEEP + 1
    for image in [*first, extra]:
        pool.give(image)
    again = [pool.take((4, 6, 3)) for _ in range(ImagePool.KEEP)]
    assert {id(a) for a in again} == {id(a) for a in first}  # the extra one was dropped
    pool.give(again[0])
    assert pool.take((4, 6, 3)) is again[0]
    other = pool.take((5, 6, 3))  # another size: KEEP new ones, the old ones dropped
    assert other.shape == (5, 6, 3) and all(other is not a for a in first)
    pool.give(again[1])  # an array of the old size is not kept
    assert all(pool.take((5, 6, 3)) is not again[1] for _ in range(ImagePool.KEEP))
