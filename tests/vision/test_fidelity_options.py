"""The option sets people_clip.npz does not cover against MediaPipe 0.10.14's own outputs on
the people clip (tests/data/mediapipe/people_options.npz, and people_clip.npz's fd0 / fd1):
Pose and Holistic with model_complexity 0 (pose_landmark_lite) and 2 (pose_landmark_heavy),
FaceDetector with model_selection 0 and 1, SelfieSegmenter with model_selection 0 and 1;
benchmarks/fidelity/people.py computes the metrics and holds the targets.

The default tier runs a few frames of a shot from a frame where MediaPipe tracked nothing
of the solution (the clip's start, a cut), against the absolute targets. The slow tier runs
the whole clip, cuts and losses included; where a target is missed there (the pose's
tracking is chaotic on the card table and the two men: docs/vision.md, Fidelity) the
yardstick decides: the metric within RATIO_LIMIT (1.5) of MediaPipe's own distance from
itself when two pixels of each frame move one 8-bit level (people_perturbed.npz)."""

from __future__ import annotations

import pytest

import engine.vision
from benchmarks.fidelity.people import (
    CASES,
    compare_solution,
    load_frames,
    load_perturbed,
    mediapipe_self,
    verdict,
)
from benchmarks.fidelity.yardstick import yardstick
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

CTX = gpu_context()
BACKENDS = ["webgpu", "xnnpack"]
# (solution, first frame, frames): the man in the car from the clip's start (a body, a face
# and no hand: Pose and Holistic from their first detection, the lite and heavy models);
# the card table after its cut (six faces at once, up to five found); the segmenters over
# the car and the cut into the card table
SHOTS = [
    ("pose0", 0, 15),
    ("pose2", 0, 8),
    ("holistic0", 0, 8),
    ("holistic2", 0, 5),
    ("face_detection0", 75, 20),
    ("face_detection1", 75, 20),
    ("selfie_segmentation0", 60, 30),
    ("selfie_segmentation1", 60, 30),
]
WHOLE = [name for name, *_ in SHOTS]
# On lavapipe webgpu builds the pose models (16-40 s at load 5-11) and Holistic's six:
# these shots run on webgpu in the slow tier
WEBGPU_SLOW = ("pose0", "pose2", "holistic0", "holistic2")
DEFAULT = [(*shot, b) for shot in SHOTS for b in BACKENDS
           if b == "xnnpack" or shot[0] not in WEBGPU_SLOW]  # fmt: skip


def _models(solution: str) -> None:
    case = CASES[solution]
    for name in getattr(engine.vision, case.cls).models(**case.options):
        model_file(name)  # skips when not fetched


def _metrics(solution: str, start: int, count: int, backend: str) -> tuple[dict, dict]:
    """The engine's metrics against MediaPipe's run, and MediaPipe's own under the
    perturbation, over frames [start, start + count)."""
    _models(solution)
    if backend == "xnnpack":
        pytest.importorskip("ai_edge_litert.interpreter")
    ref, frames = load_frames(start, count)
    ours = compare_solution(solution, ref, frames, start, context=CTX, backend=backend)
    return ours, mediapipe_self(solution, ref, load_perturbed(), start, len(frames))


def _assert_targets(ours: dict, count: int) -> None:
    assert ours["frames"] == count
    rows = verdict(ours, None)
    missed = [row for row in rows if not row[3]]
    assert rows and not missed, missed


@pytest.mark.parametrize(("solution", "start", "count", "backend"), DEFAULT)
def test_option_shot_matches_mediapipe(solution, start, count, backend):
    _assert_targets(_metrics(solution, start, count, backend)[0], count)


@pytest.mark.slow
@pytest.mark.parametrize(("solution", "start", "count"),
                         [shot for shot in SHOTS if shot[0] in WEBGPU_SLOW])  # fmt: skip
def test_option_shot_on_webgpu_matches_mediapipe(solution, start, count):
    _assert_targets(_metrics(solution, start, count, "webgpu")[0], count)


# The yardstick's one miss among these: Holistic(model_complexity=2)'s left hand, 1.08 px
# median from MediaPipe where MediaPipe's perturbed run is 0.56 px from it (1.9x), over the
# 30 frames both find it, 29 on the card table (the pose there 12 px from MediaPipe's,
# MediaPipe 15 px from itself); strict: the day it holds, the mark must go
MISSES = {"holistic2": "left hand landmark median 1.9x MediaPipe's own (docs/vision.md)"}


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 300 frames of the heavy pose model: minutes; this ends a hang
@pytest.mark.parametrize("solution", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                             reason=MISSES[s])) if s in MISSES
    else s for s in WHOLE])  # fmt: skip
def test_option_whole_clip_within_the_yardstick(solution):
    """Every target met, or within 1.5x of MediaPipe's distance from itself (backend "auto":
    what the machine runs)."""
    ours, floor = _metrics(solution, 0, 300, "auto")
    rows = verdict(ours, yardstick(CASES[solution].family, ours, floor))
    missed = [row for row in rows if not row[5]]
    assert rows and not missed, missed
