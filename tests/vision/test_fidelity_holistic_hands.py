"""Holistic's hands stage by stage against MediaPipe 0.10.14's own intermediate results on the
people clip: its hand subgraph's debug outputs (tests/data/mediapipe/
people_holistic_hand_rois.npz: per frame and hand the ROI from the pose, from the re-crop
and the tracking ROI the landmark model saw; make_reference.py `--only holistic_hand_rois`).

Each stage of engine.vision's Holistic gets MediaPipe's own inputs of that stage, so a
difference of method shows at its stage, apart from the closed loop's sensitivity (the
whole run's hands follow a pose that is chaotic on some shots: docs/vision.md, Fidelity):
- the hand ROIs (`Holistic._hand_rois`: the wrist's visibility gate, the ROI from the pose,
  hand_recrop's re-crop, RoiTrackingCalculator's choice) from MediaPipe's pose and its
  previous frame's hand landmarks, against its ROIs of each step;
- the landmarks (`Holistic._landmarks`) on MediaPipe's tracking ROI, against its landmarks.
The default tier runs the two men (190-234: the pointing hand on every frame, its tracking
check on its bound) on xnnpack; the slow tier the whole clip on both backends.
benchmarks/fidelity/holistic_hands.py computes the stages and prints them."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.fidelity.compare import HAND_ROIS_REFERENCE, load_reference
from benchmarks.fidelity.holistic_hands import stages
from benchmarks.fidelity.people import load_frames
from engine.vision import Holistic
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

CTX = gpu_context()
BACKENDS = ["webgpu", "xnnpack"]


def _stages(start: int, count: int, backend: str) -> dict:
    for name in Holistic.models():
        model_file(name)  # skips when not fetched
    if backend == "xnnpack":
        pytest.importorskip("ai_edge_litert.interpreter")
    ref, frames = load_frames(start, count)
    rois = load_reference(HAND_ROIS_REFERENCE)
    assert np.array_equal(rois["frame_crc32"], ref["frame_crc32"])
    return stages(ref, rois, frames, start, context=CTX, backend=backend)


def _apart(out: dict, stage: str) -> np.ndarray:
    """Centre px, side px, degrees of each (frame, hand) of a stage."""
    return np.array([row[2:] for row in out[stage]], np.float64).reshape(-1, 3)


def _assert_stages(out: dict, flags_missed: int = 0, chain_flips: int = 0) -> None:
    assert all(row[2] for row in out["gate"]), [r for r in out["gate"] if not r[2]]
    from_pose, recrop, tracking = (_apart(out, s) for s in ("from_pose", "recrop", "tracking"))
    assert len(from_pose) and len(recrop) and len(tracking) and out["px"], out
    # the arithmetic of the ROI from the pose: float32 rounding
    assert from_pose.max() < 0.01, from_pose.max(0)
    # hand_recrop's two points -> the ROI: the model's output within a hundredth of a pixel
    assert recrop.max() < 0.1, recrop.max(0)
    # given MediaPipe's re-crop, the same choice as MediaPipe's on every frame (a re-crop
    # where it kept tracking, or the other way, is 5-30 px away)
    assert tracking.max() < 0.1, tracking.max(0)
    # after the engine's own re-crop: the choice flips only where it sits on its bound
    flips = [row for row in out["chain"] if not row[2]]
    assert len(flips) <= chain_flips, flips
    # the landmark model on MediaPipe's ROI: its flag on the same side of 0.5
    missed = [row for row in out["flags"] if not row[2]]
    assert len(missed) <= flags_missed, missed
    px = np.array(out["px"])
    assert np.median(px) < 0.01 and px.max() < 0.1, (np.median(px), px.max())


def test_hand_stages_of_the_two_men_match_mediapipe():
    # xnnpack: on lavapipe webgpu builds Holistic's six models first (100 s at load 15);
    # the slow tier runs both
    out = _stages(190, 45, "xnnpack")
    assert len(out["tracking"]) >= 45  # the pointing hand on every frame, the other on some
    _assert_stages(out)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 300 frames of both hands' models on lavapipe: minutes
@pytest.mark.parametrize("backend", BACKENDS)
def test_hand_stages_of_the_whole_clip_match_mediapipe(backend):
    # the card table's left hand: at frame 95 its flag, at 86 its choice after the engine's
    # own re-crop (0.01 px from MediaPipe's), each on its bound
    _assert_stages(_stages(0, 300, backend), flags_missed=1, chain_flips=1)
