"""What Pose and Holistic keep and forget over a frame without a body, as MediaPipe 0.10.14's
pose_landmark_cpu graph does (its pose_landmark_filtering.pbtxt and
pose_segmentation_filtering.pbtxt; the holistic graph's hand and face tracking):

- the landmark and auxiliary-point filters restart: their LandmarksSmoothingCalculator also
  takes IMAGE_SIZE, so it runs on the empty frame and resets;
- the visibility filters and the world-landmark filter keep their state: their only input is
  the landmarks, so the empty frame never reaches them; the world filter's next time step
  spans the gap (the Python clock advanced on the empty frame as on any other);
- the mask is mixed with the last mask before the gap (PreviousLoopbackCalculator's MAIN is
  the mask itself);
- the next frame detects, from the detection's ROI; Holistic's hands and face start again
  from their re-crops (their loopbacks tick on every frame's image size).

Checked on the sample clip with a black frame in the middle (the detector finds nothing
there), against fresh instances and against the filters replayed by hand on the raw values
(smooth_landmarks=False, smooth_segmentation=False: the same ROIs, as the auxiliary points'
filter, which sets them, runs either way)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.vision import Holistic, Pose
from engine.vision.smoothing import LandmarksSmoother, VisibilitySmoother, smooth_mask
from tests.helpers.files import model_file
from tests.helpers.media import read_video, sample_clip

pytest.importorskip("ai_edge_litert.interpreter")
BACKEND = {"backend": "xnnpack"}  # the rule is the solutions' own Python: one backend
LOST = 3  # the black frame's index in SEQUENCE


@pytest.fixture(scope="module")
def sequence() -> list[np.ndarray]:
    for name in ("pose_detection", "pose_landmark_full"):
        model_file(name)
    frames = [np.ascontiguousarray(f[:, :, ::-1]) for f in read_video(sample_clip(), 5)]
    return [*frames[:LOST], np.zeros_like(frames[0]), *frames[LOST:]]


def _run(solution, frames) -> list:
    with solution:
        return [solution.process(f) for f in frames]


def test_the_landmarks_restart_after_a_lost_frame(sequence):
    got = _run(Pose(enable_segmentation=True, **BACKEND), sequence)
    fresh = _run(Pose(enable_segmentation=True, **BACKEND), sequence[LOST + 1 :])
    assert all(r.landmarks is not None for i, r in enumerate(got) if i != LOST)
    assert got[LOST].landmarks is None and got[LOST].roi is None
    after = got[LOST + 1 :]
    assert not after[0].tracked and after[0].detections  # re-detected
    for g, f in zip(after, fresh, strict=True):
        assert g.roi == f.roi
        np.testing.assert_array_equal(g.landmarks, f.landmarks)  # filters fresh, same steps
    assert not np.array_equal(after[0].world_landmarks, fresh[0].world_landmarks)


def test_visibility_world_and_mask_keep_their_state_across_the_gap(sequence):
    ratio = 0.7  # a mix MediaPipe's graph asks for, to see which mask it mixes with
    got = _run(Pose(enable_segmentation=True, segmentation_smoothing=ratio, **BACKEND), sequence)
    raw = _run(Pose(enable_segmentation=True, smooth_landmarks=False, smooth_segmentation=False,
                    **BACKEND), sequence)  # fmt: skip
    visibility = VisibilitySmoother(0.1)
    world = LandmarksSmoother(0.1, 40.0, 1.0, disable_value_scaling=True)
    previous_mask = None
    for k, (g, r) in enumerate(zip(got, raw, strict=True)):
        assert g.roi == r.roi
        if k == LOST:
            continue  # the empty frame reaches none of these filters
        t_ns = (k + 1) * 33_333_000  # the Python clock: every frame counts, the lost one too
        np.testing.assert_allclose(g.visibility, visibility(r.visibility), rtol=1e-6)
        np.testing.assert_allclose(g.world_landmarks, world(r.world_landmarks, t_ns),
                                   rtol=1e-6, atol=1e-9)  # fmt: skip
        want = smooth_mask(r.mask, previous_mask, ratio)
        np.testing.assert_allclose(g.mask, want, rtol=1e-6, atol=1e-7)
        previous_mask = want


def test_holistic_parts_restart_with_the_pose(sequence):
    model_file("face_landmark")
    got = _run(Holistic(**BACKEND), sequence)
    fresh = _run(Holistic(**BACKEND), sequence[LOST + 1 :])
    assert got[LOST].pose_landmarks is None and got[LOST].face_landmarks is None
    assert got[LOST - 1].face_landmarks is not None  # tracked before the gap
    g, f = got[LOST + 1], fresh[0]
    assert g.rois.get("face") == f.rois.get("face")
    np.testing.assert_array_equal(g.face_landmarks, f.face_landmarks)
