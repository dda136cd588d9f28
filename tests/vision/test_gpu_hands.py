"""Hands wholly on the GPU (engine/vision/gpu_hands.py) against the CPU-decided path on the
same backend (detect_track.py, float64 decisions: the oracle the GPU frame mirrors in
float32) on the people clip's card table (two hands), and its counts: one submit a
frame, the results one read, nothing read on the app's path."""

from __future__ import annotations

import numpy as np
import pytest

from engine.vision import Hands
from engine.vision.solutions.hands import hand_roi_from_landmarks
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import people_clip, read_video

CTX = gpu_context()
GPU = {"context": CTX, "backend": "webgpu"}
CARD_TABLE = 75  # the people clip's second shot: hands holding cards (two tracked)


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    model_file("palm_detection_full")
    model_file("hand_landmark_full")
    clip = read_video(people_clip(), CARD_TABLE + 4)[CARD_TABLE:]
    return [np.ascontiguousarray(f[:, :, ::-1]) for f in clip]


def _cpu_decided(**options) -> Hands:
    hands = Hands(**GPU, **options)
    hands.program = None  # the CPU-decided path on the same backend: the oracle here
    return hands


def _same_hands(got, want, px: float, world: float, flag: float) -> None:
    assert len(got.hands) == len(want.hands) >= 1
    assert (got.palm_detections is None) == (want.palm_detections is None)
    for a, b in zip(got.hands, want.hands, strict=True):
        assert a.handedness.label == b.handedness.label and a.tracked == b.tracked
        np.testing.assert_allclose(a.landmarks_px, b.landmarks_px, atol=px)
        np.testing.assert_allclose(a.world_landmarks, b.world_landmarks, atol=world)
        assert a.presence == pytest.approx(b.presence, abs=flag)


def test_stills_are_the_cpu_decided_paths(frames):
    """Every frame detected (no tracking): the palms' ROIs, the crops and the decoding
    agree to float32 rounding (the flag to 2e-3: a float32 ROI moves some of the crop's
    1/32-pixel sample positions)."""
    with Hands(static_image_mode=True, **GPU) as gpu, _cpu_decided(static_image_mode=True) as cpu:
        assert gpu.program is not None
        for frame in frames[:2]:
            _same_hands(gpu.process(frame), cpu.process(frame), px=0.1, world=1e-3, flag=2e-3)


def test_tracking_follows_the_cpu_decided_path(frames):
    """Tracked frames: the same hands, ROIs and flags; the landmarks drift apart by what
    float32 ROIs do to the 1/32-pixel crop sampling (measured: 0.01-0.1 px after one
    tracked frame, up to 1.4 px after five)."""
    with Hands(**GPU) as gpu, _cpu_decided() as cpu:
        results = [(gpu.process(f, 33 * i), cpu.process(f, 33 * i)) for i, f in enumerate(frames)]
    for i, (got, want) in enumerate(results):
        _same_hands(got, want, px=0.2 if i < 2 else 2.0, world=2e-2, flag=2e-2)
    assert [len(g.hands) for g, _ in results] == [2, 2, 2, 2]
    assert [g.palm_detections is not None for g, _ in results] == [True, False, False, False]


def test_the_next_roi_is_the_numpy_oracles(frames):
    """hands_finish.wgsl's next ROI of each hand against roi.hand_rect_from_landmarks +
    RectTransformation (float64) on the same landmarks."""
    with Hands(**GPU) as gpu:
        res = gpu.process(frames[0])
        raw = np.frombuffer(CTX.device.queue.read_buffer(gpu.program.tracked), np.float32)
    tracked = raw.reshape(-1, 4)
    assert int(tracked[0, 0]) == len(res.hands) == 2
    for k, hand in enumerate(res.hands):
        want = hand_roi_from_landmarks(hand.landmarks, (640, 480))
        (cx, cy, w, h), rotation = tracked[1 + 2 * k], tracked[2 + 2 * k, 0]
        np.testing.assert_allclose([cx, cy, w, h], [want.x_center * 640, want.y_center * 480,
                                                    want.width * 640, want.height * 480],
                                   atol=1e-3)  # fmt: skip
        assert rotation == pytest.approx(want.rotation, abs=1e-5)


def test_one_submit_a_frame_and_nothing_read_on_the_apps_path(frames):
    with Hands(**GPU) as hands:
        hands.process(frames[0])
        assert hands.last_frame_counts == (1, 1)  # process(): the frame, its one read
    with Hands(output="gpu", **GPU) as hands:
        hands.prepare((640, 480))
        for frame in frames[:2]:
            assert hands.prepare_frame(frame) is None and hands.last_frame_counts == (0, 0)
            view, _ = hands.backend.frames(frame)
            encoder = CTX.device.create_command_encoder()
            for _, encode in hands.steps(view):
                encode(encoder)
            CTX.device.queue.submit([encoder.finish()])
        tally = np.frombuffer(CTX.device.queue.read_buffer(hands.gpu.tally), np.uint32)
        args = np.frombuffer(CTX.device.queue.read_buffer(hands.gpu.args), np.uint32)
        got = hands.read()  # the last frame, read back when asked
    assert tally[0] == len(got.hands) == 2 and tally[1] == 0  # tracked: no detections used
    assert args[1] == 2 * hands.gpu.pairs and args[5] == 2 * 21
