"""The solutions against MediaPipe 0.10.14's own Python solutions on the sample clip
(tests/data/mediapipe/sample_clip.npz; benchmarks/fidelity/compare.py computes the metrics).
A few frames in the default run; the whole clip is slow-marked."""

from __future__ import annotations

import pytest

from benchmarks.fidelity.compare import (
    check_targets,
    clip_frames,
    compare,
    load_reference,
    run_ours,
)
from tests.helpers.files import CORE_MODELS, model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import sample_clip

CTX = gpu_context()


BACKENDS = ["webgpu", "xnnpack"]


def _metrics(frames: int, backend: str) -> dict:
    for name in CORE_MODELS:
        model_file(name)  # skips when not fetched
    if backend == "xnnpack":
        pytest.importorskip("ai_edge_litert.interpreter")
    ref = load_reference()
    # A clip that decodes to other frames than MediaPipe saw (another OpenCV encoder or
    # decoder) raises ClipMismatch: a failure, the references must be made again.
    rgb = clip_frames(sample_clip(), ref["frame_crc32"], frames)
    return compare(ref, run_ours(rgb, context=CTX, backend=backend))


def _assert_targets(metrics: dict) -> None:
    missed = [row for row in check_targets(metrics) if not row[3]]
    assert not missed, missed


@pytest.mark.parametrize("backend", BACKENDS)
def test_first_frames_match_mediapipe(backend):
    """Frames 0-5: the first detection, then tracked face-mesh frames."""
    m = _metrics(6, backend)
    _assert_targets(m)
    assert m["detection"]["box_iou"]["min"] >= 0.99
    assert m["mesh"]["landmark_px"]["max"] < 1.0
    assert m["segmentation"]["mask_iou"]["min"] >= 0.99
    assert m["mesh"]["detector_frames"] == 1  # tracked after the first frame, as MediaPipe


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 300 frames on lavapipe: minutes; this ends a hang
@pytest.mark.parametrize("backend", BACKENDS)
def test_whole_clip_matches_mediapipe(backend):
    m = _metrics(300, backend)
    assert m["frames"] == 300
    _assert_targets(m)
