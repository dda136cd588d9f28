"""The drop-in's names, signatures, constants, styles and messages against MediaPipe 0.10.14's
own (tests/data/mediapipe/dropin_api.json.gz and dropin_results.json.gz, made by
make_dropin.py from the real package in a side venv). No model, no adapter."""

from __future__ import annotations

import base64
import sys
import types

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, json_format

from engine.errors import ModelError
from engine.vision import mediapipe as mp
from engine.vision.mediapipe import messages
from engine.vision.mediapipe.solution_base import native_options
from tests.data.mediapipe.make_dropin import (
    MODULES,
    Recorder,
    describe_solutions,
    describe_styles,
    drawing_probes,
    load_api,
    load_drawings,
    load_results,
    plot_calls,
)

API = load_api()
OURS = describe_solutions(mp.solutions)


@pytest.mark.parametrize("module", MODULES)
def test_public_names_are_mediapipes(module):
    theirs, ours = API["modules"][module], OURS[module]
    assert sorted(ours) == sorted(theirs), f"missing {sorted(set(theirs) - set(ours))}, " \
        f"extra {sorted(set(ours) - set(theirs))}"  # fmt: skip
    for name, description in theirs.items():
        assert ours[name] == description, f"{module}.{name}"


def test_connection_sets_iterate_in_mediapipes_order():
    """Drawing follows the iteration order, so it is part of the API (connections.py)."""
    sets = {(m, n): d["items"] for m, names in API["modules"].items()
            for n, d in names.items() if d["kind"] == "frozenset"}  # fmt: skip
    assert len(sets) == 33
    for (module, name), items in sets.items():
        assert [list(c) for c in getattr(getattr(mp.solutions, module), name)] == items, name


def test_default_styles_are_mediapipes():
    assert describe_styles(mp.solutions) == API["styles"]


def test_styles_share_their_specs_as_mediapipes_do():
    ds = mp.solutions.drawing_styles
    a, b = ds.get_default_hand_landmarks_style(), ds.get_default_hand_landmarks_style()
    assert a is not b and a[0] is b[0] and a[0] is a[1] and a[0] is not a[2]
    assert ds.get_default_pose_landmarks_style()[0] is not ds.get_default_pose_landmarks_style()[0]


def test_message_descriptors_are_mediapipes():
    for name, text in API["protos"].items():
        fd = descriptor_pb2.FileDescriptorProto()
        messages.POOL.FindFileByName(name).CopyToProto(fd)
        assert str(fd) == text, name


def _message_records(value):
    if value is None or "ndarray" in value:
        return []
    if "list" in value:
        return [r for item in value["list"] for r in _message_records(item)]
    return [value]


def test_mediapipes_messages_parse_and_print_the_same():
    """MediaPipe's result bytes parse into the drop-in's classes, give the same bytes back
    and print MediaPipe's text (float formatting included)."""
    results = [res for case in load_results()["cases"].values() for res in case["results"]]
    records = [record for res in results for value in res["values"].values()
               for record in _message_records(value)]  # fmt: skip
    texts = [r for r in records if "text" in r]
    assert len(records) > 40 and len(texts) > 15
    for record in records:
        data = base64.b64decode(record["bytes"])
        message = messages.message_class(record["message"]).FromString(data)
        assert type(message).__name__ == record["type"]
        assert message.SerializeToString() == data
        if "text" in record:
            assert str(message) == record["text"]


def test_landmark_lists_from_arrays_are_the_messages_field_by_field():
    rng = np.random.default_rng(3)
    points, vis, pres = rng.normal(size=(33, 3)), rng.uniform(size=33), rng.uniform(size=33)
    for build, cls in ((messages.normalized_landmark_list, messages.NormalizedLandmarkList),
                       (messages.landmark_list, messages.LandmarkList)):  # fmt: skip
        for kwargs in ({}, {"visibility": vis}, {"visibility": vis, "presence": pres}):
            want = cls()
            for i, (x, y, z) in enumerate(points.astype(np.float32).tolist()):
                lm = want.landmark.add(x=x, y=y, z=z)
                for field, values in kwargs.items():
                    setattr(lm, field, float(np.float32(values[i])))
            got = build(points, **kwargs)
            assert got == want and len(got.landmark) == 33
            assert got.landmark[5].HasField("visibility") == ("visibility" in kwargs)
            assert got.landmark[5].HasField("presence") == ("presence" in kwargs)
    assert len(messages.normalized_landmark_list(np.zeros((0, 3))).landmark) == 0


def test_detection_and_classification_messages():
    d = messages.detection(0.75, [0.1, 0.2, 0.4, 0.6], [[0.15, 0.25], [0.3, 0.35]])
    assert list(d.label_id) == [0] and d.score[0] == pytest.approx(0.75)
    assert d.location_data.format == messages.LocationData.RELATIVE_BOUNDING_BOX
    box = d.location_data.relative_bounding_box
    assert (box.xmin, box.width, box.height) == pytest.approx((0.1, 0.3, 0.4))
    assert len(d.location_data.relative_keypoints) == 2 and not d.HasField("feature_tag")
    assert mp.solutions.face_detection.get_key_point(
        d, mp.solutions.face_detection.FaceKeyPoint.LEFT_EYE).y == pytest.approx(0.35)  # fmt: skip
    c = messages.classification_list(1, 0.9, "Right")
    assert json_format.MessageToDict(c) == {
        "classification": [{"index": 1, "score": pytest.approx(0.9), "label": "Right"}]
    }


def test_drawing_errors_are_mediapipes():
    got = drawing_probes(mp.solutions.drawing_utils, messages.NormalizedLandmarkList,
                         messages.Detection)  # fmt: skip
    assert got == API["drawing_errors"]


def test_plot_landmarks_asks_pyplot_what_mediapipe_asks(monkeypatch):
    recorder = Recorder()
    matplotlib = types.ModuleType("matplotlib")
    matplotlib.pyplot = recorder
    monkeypatch.setitem(sys.modules, "matplotlib", matplotlib)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", recorder)
    plot_calls.recorder = recorder
    (full_name, data), *_ = load_drawings()[1]["random"]  # the list MediaPipe plotted
    landmarks = messages.message_class(full_name).FromString(data)
    got = plot_calls(mp.solutions.drawing_utils.plot_landmarks, landmarks,
                     mp.solutions.pose.POSE_CONNECTIONS)  # fmt: skip
    assert len(got) > 30 and got == API["plot_calls"]


def test_plot_landmarks_without_matplotlib_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    landmarks = messages.normalized_landmark_list(np.full((2, 3), 0.5))
    with pytest.raises(ImportError, match="pip install matplotlib"):
        mp.solutions.drawing_utils.plot_landmarks(landmarks)


def test_objectron_cannot_be_made_and_says_which_models_are_missing():
    objectron = mp.solutions.objectron
    with pytest.raises(ModelError, match="object_detection_3d_chair.tflite"):
        objectron.Objectron(model_name="Chair")
    with pytest.raises(ValueError, match="Sofa is not a valid model name"):
        objectron.Objectron(model_name="Sofa")
    assert objectron.get_model_by_name("Cup").label_name == "Coffee cup, Mug"


SOLUTIONS = [("hands", "Hands"), ("pose", "Pose"), ("face_mesh", "FaceMesh"),
             ("holistic", "Holistic"), ("face_detection", "FaceDetection"),
             ("selfie_segmentation", "SelfieSegmentation")]  # fmt: skip


@pytest.mark.parametrize(("module", "cls"), SOLUTIONS)
def test_an_unknown_keyword_is_a_type_error_naming_it(module, cls):
    with pytest.raises(TypeError, match="backend"):
        getattr(getattr(mp.solutions, module), cls)(backend="webgpu")


def test_engine_options_reach_the_native_solution_and_can_be_scoped(monkeypatch):
    made = []
    monkeypatch.setattr(mp.solutions.selfie_segmentation, "_SelfieSegmenter",
                        lambda **kwargs: made.append(kwargs))  # fmt: skip
    assert native_options() == {}
    with mp.engine_options(backend="xnnpack", num_threads=1):
        mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=1)
        assert native_options() == {"backend": "xnnpack", "num_threads": 1}
    assert native_options() == {}
    assert made == [{"model_selection": 1, "backend": "xnnpack", "num_threads": 1}]
    with pytest.raises(TypeError, match="bgr"):
        mp.engine_options(bgr=True)
    mp.engine_options(sync="spin")
    assert native_options() == {"sync": "spin"}
    mp.engine_options()
    assert native_options() == {}


def test_solution_base_runs_no_graph():
    with pytest.raises(NotImplementedError, match="runs no MediaPipe graph"):
        mp.solutions.hands.SolutionBase(binary_graph_path="hand_landmark_tracking_cpu.binarypb")
