"""The drop-in's solutions against MediaPipe 0.10.14's on the same frames: every case of
make_dropin.py's RESULT_CASES (people.mp4's frames with faces, two hands, a body, none; the
astronaut still) run here as a MediaPipe user runs it, each result compared with MediaPipe's
(tests/data/mediapipe/dropin_results.json.gz):

- the structure exactly: the output's fields, which are None, list lengths, message types,
  the fields set on every message (HasField / ListFields), labels, indices, enum values,
  the mask's dtype, shape and writeability;
- the numbers within a few pixels: normalised x, y within 3 px and z within 10 px (z is on
  x's scale), world landmarks within 2 mm (hands) or 6 mm (pose), scores and visibility
  within 0.01, the mask's eighth-size copy within 2 levels on average (the native solutions
  are within MediaPipe's own noise: docs/vision.md, Fidelity).

The solutions run with the drop-in's defaults (backend "auto": XNNPACK on lavapipe); the
refined face mesh runs on webgpu (5-10 s on lavapipe, its pipelines compiled)."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from engine.catalog.paths import assets_dir
from engine.vision import mediapipe as mp
from engine.vision.mediapipe import messages
from tests.data.mediapipe.make_dropin import (
    RESULT_CASES,
    case_frames,
    frame_crc,
    load_api,
    load_results,
    solution_probes,
    value_record,
)
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

gpu_context()  # backend "auto" decides from the adapter
REFERENCE = load_results()
MODELS = {
    "hands": ("palm_detection_full", "hand_landmark_full"),
    "face_detection": ("face_detection_short_range",),
    "face_detection_full_range": ("face_detection_full_range_sparse",),
    "face_mesh": ("face_detection_short_range", "face_landmark"),
    "face_mesh_refined": ("face_detection_short_range", "face_landmark_with_attention"),
    "pose": ("pose_detection", "pose_landmark_full"),
    "selfie_segmentation": ("selfie_segmentation", "selfie_segmentation_landscape"),
    "holistic": ("pose_detection", "pose_landmark_full", "hand_recrop", "hand_landmark_full",
                 "face_detection_short_range", "face_landmark"),
}  # fmt: skip
PIXELS = {"x": 3, "y": 3, "z": 10, "xmin": 3, "ymin": 3, "width": 3, "height": 3}
# world landmarks (metres): the hands' are the model's, the pose's pass MediaPipe's world
# filter, which a 0.03 px change of the tracked ROI moves by millimetres
WORLD = {"multi_hand_world_landmarks": 0.002, "pose_world_landmarks": 0.006}
SCORES = 0.01  # scores, visibility, presence


@pytest.fixture(scope="module")
def frames() -> dict[str, np.ndarray]:
    frames = case_frames(assets_dir() / "astronaut.png")
    for key, rgb in frames.items():
        assert frame_crc(rgb) == REFERENCE["frame_crc32"][key], (
            f"{key}: not the image MediaPipe's results were made from; remake them: "
            "python -m tests.data.mediapipe.make_dropin"
        )
    return frames


def _tolerance(message, field: str, size: tuple[int, int], output: str) -> float:
    w, h = size
    if message.DESCRIPTOR.full_name == "mediapipe.Landmark" and field in "xyz":
        return WORLD[output]
    if field in PIXELS:
        return PIXELS[field] / (h if field in ("y", "ymin", "height") else w)
    return SCORES


def compare_messages(ours, theirs, size, where: str, output: str) -> None:
    """The same fields set, the same repeated lengths, equal non-float values, floats
    within `_tolerance`."""
    assert type(ours).__name__ == type(theirs).__name__, where
    set_ours = [f.name for f, _ in ours.ListFields()]
    assert set_ours == [f.name for f, _ in theirs.ListFields()], where
    for fd, value in theirs.ListFields():
        mine = getattr(ours, fd.name)
        repeated = fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == fd.LABEL_REPEATED
        pairs = list(zip(mine, value, strict=True)) if repeated else [(mine, value)]
        assert not repeated or len(mine) == len(value), f"{where}.{fd.name}"
        for i, (a, b) in enumerate(pairs):
            at = f"{where}.{fd.name}" + (f"[{i}]" if repeated else "")
            if fd.type == fd.TYPE_MESSAGE:
                compare_messages(a, b, size, at, output)
            elif fd.type == fd.TYPE_FLOAT:
                assert a == pytest.approx(b, abs=_tolerance(ours, fd.name, size, output)), at
            else:
                assert a == b, at


def compare_value(ours, record, size, where: str, output: str) -> None:
    if record is None:
        assert ours is None, where
        return
    assert ours is not None, where
    if "list" in record:
        assert isinstance(ours, list) and len(ours) == len(record["list"]), where
        for i, (a, b) in enumerate(zip(ours, record["list"], strict=True)):
            compare_value(a, b, size, f"{where}[{i}]", output)
    elif "message" in record:
        theirs = messages.message_class(record["message"]).FromString(
            base64.b64decode(record["bytes"])
        )
        compare_messages(ours, theirs, size, where, output)
    else:
        assert isinstance(ours, np.ndarray) and str(ours.dtype) == record["ndarray"], where
        assert list(ours.shape) == record["shape"], where
        assert ours.flags.writeable == record["writeable"], where
        q, ours_q = (np.frombuffer(base64.b64decode(r["q8"]), np.uint8).reshape(r["q8_shape"])
                     for r in (record, value_record(ours, text=False)))  # fmt: skip
        diff = np.abs(ours_q.astype(int) - q.astype(int))
        assert diff.mean() <= 2.0, f"{where}: mean {diff.mean():.2f} levels"
        assert ((ours_q > 127) != (q > 127)).mean() <= 0.005, where


def _models(case: str) -> None:
    for key, names in MODELS.items():
        if case == key or (case.startswith(key + "_") and case not in MODELS):
            for name in names:
                model_file(name)


@pytest.mark.parametrize("case", list(RESULT_CASES))
def test_results_are_mediapipes(case, frames):
    _models(case)
    module, cls, kwargs, keys = RESULT_CASES[case]
    reference = REFERENCE["cases"][case]
    assert reference["kwargs"] == kwargs and reference["frames"] == keys
    wanted = iter(reference["results"])
    with getattr(getattr(mp.solutions, module), cls)(**kwargs) as solution:
        for key in keys:
            if key == "reset":
                solution.reset()
                continue
            rgb, want = frames[str(key)], next(wanted)
            result = solution.process(rgb)
            assert list(result._fields) == want["fields"]
            size = (rgb.shape[1], rgb.shape[0])
            for field in want["fields"]:
                compare_value(getattr(result, field), want["values"][field], size,
                              f"{case} frame {key} {field}", field)  # fmt: skip
    assert next(wanted, None) is None


def test_solution_base_behaves_as_mediapipes():
    """Bad images, `with`, close twice, process after close (MediaPipe's probes ran on
    Hands; the behaviour is SolutionBase's, the same for every solution)."""
    model_file("face_detection_short_range")
    got = solution_probes(mp.solutions.face_detection.FaceDetection())
    assert got == load_api()["solution_errors"]
