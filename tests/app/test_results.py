"""ar-demo --results (per-frame JSON lines) and the frames-with-face counts of --stats,
against the solutions run directly on the same frames."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.cli import main
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import read_video, sample_clip

CTX = gpu_context()
FRAMES = 4


def _run(tmp_path, models, *extra) -> tuple[list[dict], dict]:
    out, stats, results = tmp_path / "out.mp4", tmp_path / "stats.json", tmp_path / "r.jsonl"
    args = [a for m in models for a in ("--model", str(model_file(m)))]
    code = main([*args, "--input", str(sample_clip()), "--headless", "--output", str(out),
                 "--frames", str(FRAMES), "--stats", str(stats), "--results", str(results),
                 "--no-progress", "--backend", "webgpu", *extra])  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["frame"] for r in lines] == list(range(FRAMES))
    summary = json.loads(stats.read_text())
    assert summary["transfers"]["result_readbacks"] == FRAMES
    assert summary["faces"]["results_frames"] == FRAMES
    return lines, summary


def _rgb_frames() -> list[np.ndarray]:
    return [np.ascontiguousarray(f[:, :, ::-1]) for f in read_video(sample_clip(), FRAMES)]


def test_face_mesh_results_and_face_counts(tmp_path):
    from engine.vision import FaceMesh

    lines, summary = _run(tmp_path, ["face_detection_short_range", "face_landmark"])
    assert summary["faces"]["frames_with_face"] == FRAMES
    assert summary["faces"]["frames_without_face"] == 0
    with FaceMesh(context=CTX, backend="webgpu") as fm:
        want = [fm.process(f) for f in _rgb_frames()]
    for line, res in zip(lines, want, strict=True):
        assert line["faces"] == 1 and line["detector_ran"]  # the live path detects always
        (mesh,) = line["meshes"]
        got = np.array(mesh["landmarks_px"])
        assert got.shape == (468, 3) and mesh["tracked"] == (line["frame"] > 0)
        np.testing.assert_allclose(got, res.faces[0].landmarks_px, atol=2e-3)


def test_face_detection_results(tmp_path):
    from engine.vision import FaceDetector

    lines, summary = _run(tmp_path, ["face_detection_short_range"])
    assert summary["faces"]["frames_with_face"] == FRAMES
    with FaceDetector(context=CTX, backend="webgpu") as fd:
        want = [fd.process(f) for f in _rgb_frames()]
    for line, res in zip(lines, want, strict=True):
        (det,) = line["detections"]
        np.testing.assert_allclose(det["box_px"], res.detections[0].box_px, atol=2e-3)
        assert np.array(det["keypoints_px"]).shape == (6, 2)


def test_segmentation_mask_stats(tmp_path):
    from engine.vision import SelfieSegmenter

    lines, summary = _run(tmp_path, ["selfie_segmentation"], "--style", "mask")
    assert "frames_with_face" not in summary["faces"]  # no face flag in this effect
    with SelfieSegmenter(context=CTX, backend="webgpu") as seg:
        want = [seg.process(f).mask for f in _rgb_frames()]
    for line, mask in zip(lines, want, strict=True):
        assert line["mask"]["mean"] == pytest.approx(float(mask.mean()), abs=1e-4)
        assert line["mask"]["person_fraction"] == pytest.approx(
            float((mask > 0.5).mean()), abs=1e-5
        )
        x0, y0, x1, y1 = line["mask"]["person_box_px"]
        assert 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480
