"""The fidelity yardstick's floor and arithmetic (benchmarks/fidelity/yardstick.py): MediaPipe
0.10.14's runs on the people clip perturbed (tests/data/mediapipe/people_perturbed.npz and
people_perturbed_faces.npz) are the runs of the recorded perturbation, and MediaPipe's
disagreement with itself is computed by the metrics the engine is measured with. No
engine runs here: the comparisons of the engine with the yardstick are in
test_fidelity_options.py and test_fidelity_people.py."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from benchmarks.fidelity.compare import PEOPLE_CLIP, clip_frames
from benchmarks.fidelity.people import (
    CASES,
    load_frames,
    load_perturbed,
    mediapipe_self,
)
from benchmarks.fidelity.yardstick import DISTANCES, ratio, yardstick
from tests.data.mediapipe.make_reference import perturb, perturbation

PERTURBED = load_perturbed()
REF, _ = load_frames(0, 0)


def test_perturbed_runs_are_of_the_recorded_perturbation():
    """The stored pixels and steps are the seed's, and applied to the kept clip they give
    the frames MediaPipe's perturbed run saw (their CRCs; the first 60 frames: decoding
    the clip is most of the time): two pixels a frame, one level."""
    crc = PERTURBED["frame_crc32"]
    assert np.array_equal(crc, REF["frame_crc32"])
    w, h = (int(v) for v in PERTURBED["size"])
    positions, steps = perturbation(len(crc), h, w, int(PERTURBED["perturb_seed"]))
    assert np.array_equal(positions, PERTURBED["perturb_positions"])
    assert np.array_equal(steps, PERTURBED["perturb_steps"])
    frames = clip_frames(PEOPLE_CLIP, crc, 60)
    for rgb, p, s, want in zip(frames, positions, steps, PERTURBED["perturbed_crc32"],
                               strict=False):  # fmt: skip
        moved = perturb(rgb, p, s)
        diff = np.abs(moved.astype(int) - rgb.astype(int))
        assert diff.sum() == 6 and diff.max() == 1  # two pixels, three channels, one level
        assert zlib.crc32(np.ascontiguousarray(moved[:, :, ::-1]).tobytes()) == int(want)


def test_perturb_stays_within_eight_bits():
    rgb = np.array([[[0, 255, 7], [255, 0, 128]]], np.uint8)
    moved = perturb(rgb, np.array([[0, 0], [0, 1]]), np.array([-1, 1], np.int8))
    assert moved.tolist() == [[[1, 254, 6], [254, 1, 129]]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_mediapipe_self_of_the_reference_itself_is_nil(name):
    """The plumbing: the reference's own arrays as the perturbed run agree exactly, and
    every distance of the family is there."""
    n = len(REF["frame_crc32"])
    m = mediapipe_self(name, REF, REF, 0, n)
    assert m["frames"] == n and m["count_agree"] == 1.0
    rows = yardstick(CASES[name].family, m, m)
    assert rows and all(r["ours"] == 0.0 and r["ratio"] == 0.0 and r["within"] for r in rows)
    labels = {r["metric"] for r in rows}
    assert {"frames where the count differs", "frames where presence differs",
            "mask 1 - IoU median"} & labels or name.startswith("holistic")  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_mediapipe_moves_under_the_perturbation(name):
    """The floor is MediaPipe's own: its perturbed run differs from its run somewhere (two
    pixels of one level change its output); where it tracks nothing from frame to frame
    (face detection, segmentation) no count changes."""
    n = len(REF["frame_crc32"])
    m = mediapipe_self(name, REF, PERTURBED, 0, n)
    rows = yardstick(CASES[name].family, m, m)
    assert any(r["ours"] > 0 for r in rows), rows
    if CASES[name].family in ("face_detection", "selfie_segmentation"):
        assert m["count_agree"] == 1.0, m


def test_ratio_and_rows():
    assert ratio(0.3, 0.2) == pytest.approx(1.5)
    assert ratio(0.0, 0.0) == 0.0 and math.isinf(ratio(0.1, 0.0))
    ours = {"count_agree": 0.99, "landmark_px": {"median": 0.3, "p95": 2.0},
            "world_mm": {"n": 0}, "label_agree": 1.0}  # fmt: skip
    floor = {"count_agree": 0.98, "landmark_px": {"median": 0.1, "p95": 2.0},
             "world_mm": {"n": 0}, "label_agree": 1.0}  # fmt: skip
    rows = {r["metric"]: r for r in yardstick("hands", ours, floor)}
    assert rows["frames where the count differs"]["ratio"] == pytest.approx(0.5)
    assert rows["landmark px median"]["ratio"] == pytest.approx(3.0)
    assert not rows["landmark px median"]["within"] and rows["landmark px p95"]["within"]
    assert rows["hands whose handedness differs"]["ratio"] == 0.0  # 0 / 0
    assert "world mm median" not in rows  # nothing compared: no row
    assert set(DISTANCES) == {c.family for c in CASES.values()}
