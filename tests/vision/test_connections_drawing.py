"""Connection sets and draw_landmarks against MediaPipe 0.10.14's own modules.

The oracle is the code in the mediapipe wheel that `engine-fetch models` downloads (its
solutions/*_connections.py and drawing_utils.py, run from the wheel's source with the
three protobuf modules it imports stubbed: draw_landmarks only reads .landmark, .x, .y and
HasField)."""

from __future__ import annotations

import sys
import types
import zipfile
import zlib

import numpy as np
import pytest

from engine.catalog.fetch import default_cache, find_cached_wheel
from engine.catalog.manifest import load_manifest
from engine.vision import connections
from engine.vision.drawing import DrawingSpec, draw_landmarks


def _wheel_source(module: str) -> str:
    wheel = find_cached_wheel(load_manifest(), default_cache())
    if wheel is None:
        pytest.skip(f"no mediapipe wheel in {default_cache()}: run `make models`")
    with zipfile.ZipFile(wheel) as z:
        return z.read(f"mediapipe/python/solutions/{module}.py").decode()


def _mediapipe_module(module: str, monkeypatch) -> dict:
    stubs = {}
    for name in ("mediapipe", "mediapipe.framework", "mediapipe.framework.formats"):
        stubs[name] = types.ModuleType(name)
    for proto in ("detection_pb2", "landmark_pb2", "location_data_pb2"):
        stub = types.ModuleType(proto)
        stub.NormalizedLandmarkList = object
        stub.Detection = object
        setattr(stubs["mediapipe.framework.formats"], proto, stub)
        stubs[f"mediapipe.framework.formats.{proto}"] = stub
    stubs["matplotlib"] = types.ModuleType("matplotlib")  # only draw_axis / plots use it
    stubs["matplotlib.pyplot"] = types.ModuleType("matplotlib.pyplot")
    for name, stub in stubs.items():
        monkeypatch.setitem(sys.modules, name, stub)
    mod = types.ModuleType(f"mediapipe_{module}")  # dataclasses look their module up
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    exec(compile(_wheel_source(module), f"mediapipe/{module}.py", "exec"), mod.__dict__)
    return mod.__dict__


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("hands_connections", ["HAND_CONNECTIONS", "HAND_PALM_CONNECTIONS",
                               "HAND_THUMB_CONNECTIONS", "HAND_PINKY_FINGER_CONNECTIONS"]),
        ("pose_connections", ["POSE_CONNECTIONS"]),
        ("face_mesh_connections", ["FACEMESH_TESSELATION", "FACEMESH_CONTOURS",
                                   "FACEMESH_IRISES", "FACEMESH_LIPS", "FACEMESH_NOSE",
                                   "FACEMESH_LEFT_EYE", "FACEMESH_RIGHT_IRIS"]),
    ],
)  # fmt: skip
def test_connection_sets_are_mediapipes(module, names):
    namespace: dict = {}
    exec(_wheel_source(module), namespace)
    for name in names:
        assert getattr(connections, name) == namespace[name], name
        # the same iteration order: drawing follows it (connections.py)
        assert list(getattr(connections, name)) == list(namespace[name]), name


class _Landmark:
    def __init__(self, x, y, visibility=None):
        self.x, self.y, self.visibility = x, y, visibility

    def HasField(self, field):  # noqa: N802 (the protobuf method's name)
        return field == "visibility" and self.visibility is not None


class _LandmarkList:
    def __init__(self, points, visibility=None):
        vis = [None] * len(points) if visibility is None else visibility
        self.landmark = [
            _Landmark(float(x), float(y), v) for (x, y), v in zip(points, vis, strict=True)
        ]


@pytest.mark.parametrize(
    ("case", "count", "connection_set", "with_visibility"),
    [
        ("hand", 21, "HAND_CONNECTIONS", False),
        ("pose", 33, "POSE_CONNECTIONS", True),
        ("face", 468, "FACEMESH_TESSELATION", False),
    ],
)
def test_draw_landmarks_draws_what_mediapipe_draws(case, count, connection_set,
                                                   with_visibility, monkeypatch):  # fmt: skip
    mp = _mediapipe_module("drawing_utils", monkeypatch)
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    points = rng.uniform(-0.1, 1.1, (count, 2))  # some outside the frame: not drawn
    points[:3] = [(0.0, 0.0), (1.0, 1.0), (0.5, 1.0)]  # the edges count in
    visibility = rng.uniform(0, 1, count) if with_visibility else None
    pairs = getattr(connections, connection_set)
    base = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)
    ours, theirs = base.copy(), base.copy()
    draw_landmarks(ours, points, pairs, visibility=visibility)
    mp["draw_landmarks"](theirs, _LandmarkList(points, visibility), pairs)
    assert np.array_equal(ours, theirs)
    assert not np.array_equal(ours, base)  # something was drawn
    spec = DrawingSpec(color=(10, 200, 30), thickness=1, circle_radius=4)
    ours2, theirs2 = base.copy(), base.copy()
    draw_landmarks(ours2, points, pairs, spec, spec, visibility=visibility)
    their_spec = mp["DrawingSpec"](color=(10, 200, 30), thickness=1, circle_radius=4)
    mp["draw_landmarks"](theirs2, _LandmarkList(points, visibility), pairs, their_spec,
                         their_spec)  # fmt: skip
    assert np.array_equal(ours2, theirs2)


def test_draw_landmarks_refuses_a_connection_to_no_landmark():
    image = np.zeros((10, 10, 3), np.uint8)
    with pytest.raises(ValueError, match=r"Invalid connection from landmark \W0 to landmark \W21"):
        draw_landmarks(image, np.full((21, 2), 0.5), [(0, 21)])
