"""Hands, Pose and two-face FaceMesh against MediaPipe 0.10.14's own outputs on real footage
(assets/people.mp4, tests/data/mediapipe/people_clip.npz; benchmarks/fidelity/people.py
computes the metrics and holds the targets).

The default tier runs one shot per solution, from a frame where MediaPipe tracked nothing
of it (a cut into the shot, or the clip's start), so the run starts in MediaPipe's state;
the slow tier runs the whole clip, every cut and re-detection included."""

from __future__ import annotations

import pytest

from benchmarks.fidelity.people import check_targets, compare_solution, load_frames
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

CTX = gpu_context()
MODELS = {
    "hands1": ("palm_detection_full", "hand_landmark_full"),
    "hands0": ("palm_detection_lite", "hand_landmark_lite"),
    "pose": ("pose_detection", "pose_landmark_full"),
    "face_mesh": ("face_detection_short_range", "face_landmark"),
}
# (solution, first frame, frames): the card table shot (two hands, a cut in), the clip's
# start (a body tracked from frame 0), the two-face shot after the faceless bikes shot
SHOTS = [("hands1", 75, 55), ("pose", 0, 40), ("face_mesh", 190, 45)]


def _metrics(solution: str, start: int, count: int) -> dict:
    for name in MODELS[solution]:
        model_file(name)  # skips when not fetched
    ref, frames = load_frames(start, count)
    return compare_solution(solution, ref, frames, start, context=CTX)


def _assert_targets(metrics: dict) -> None:
    rows = check_targets(metrics)
    assert rows, metrics
    missed = [row for row in rows if not row[3]]
    assert not missed, missed


@pytest.mark.parametrize(("solution", "start", "count"), SHOTS)
def test_one_shot_matches_mediapipe(solution, start, count):
    metrics = _metrics(solution, start, count)
    assert metrics["frames"] == count
    _assert_targets(metrics)


@pytest.mark.slow
@pytest.mark.parametrize("solution", list(MODELS))
def test_whole_clip_matches_mediapipe(solution):
    metrics = _metrics(solution, 0, 300)
    _assert_targets(metrics)
