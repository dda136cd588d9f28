"""MediaPipe 0.10.14's own `mp.solutions`, recorded as the drop-in's oracle.

- input: MediaPipe 0.10.14's Python package in a side venv (as make_reference.py: made
  like benchmarks/app/mediapipe_compare.py makes it, or --mp-python); frames of
  tests/data/mediapipe/people.mp4 (decoded in this project's venv and checked against
  people_clip.npz's CRCs, so both sides see the same pixels) and assets/astronaut.png
- output, beside this file:
  - dropin_api.json.gz: every public name of the solutions modules (kind, signatures with
    the defaults' repr, enum members, constants, connection sets in iteration order),
    the default styles as returned, the result messages' .proto descriptors, what
    SolutionBase and drawing_utils raise on bad input, and plot_landmarks' matplotlib calls;
  - dropin_results.json.gz: RESULT_CASES, each a solution made with those arguments and
    run on its frames in order: per frame the output's field names, then each value:
    None, a list, a numpy array (dtype, shape, writeable, an eighth-size 8-bit copy) or a
    message (its type, serialized bytes, and the text print() gives for the first one of
    each field);
  - dropin_drawing.npz: the drawings of `drawing_cases` (drawing_utils with the default
    styles on a flat canvas) and their inputs as bytes: MediaPipe's own result messages,
    and synthetic landmark lists and detections.
- usage: python -m tests.data.mediapipe.make_dropin [--mp-python PATH]
The functions `describe_solutions`, `describe_styles`, `drawing_cases`, `solution_probes`,
`drawing_probes`, `plot_calls` and `value_record` run on both sides, on MediaPipe's
`mp.solutions` here and on the drop-in's in tests/vision/mediapipe/; they import neither.
"""

from __future__ import annotations

import argparse
import base64
import enum
import gzip
import inspect
import json
import subprocess
import sys
import types
import zlib
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent
API_OUT = DATA / "dropin_api.json.gz"
RESULTS_OUT = DATA / "dropin_results.json.gz"
DRAWING_OUT = DATA / "dropin_drawing.npz"
PEOPLE_CLIP = DATA / "people.mp4"

MODULES = ("face_detection", "face_mesh", "face_mesh_connections", "hands", "hands_connections",
           "pose", "pose_connections", "holistic", "selfie_segmentation", "drawing_utils",
           "drawing_styles", "objectron")  # fmt: skip
PROTOS = ("landmark", "classification", "detection", "location_data")
STYLES = tuple(f"get_default_{name}_style" for name in (
    "hand_landmarks", "hand_connections", "face_mesh_contours", "face_mesh_tesselation",
    "face_mesh_iris_connections", "pose_landmarks"))  # fmt: skip

# name -> (module, class, keyword arguments, frames: people.mp4 indices or "astronaut"), run
# in order on one instance (video mode unless static_image_mode): a cut between two listed
# frames is a jump in the video, the same for both sides; "reset": solution.reset() there
RESULT_CASES = {
    "hands": ("hands", "Hands", {}, [0, 75, 76, 240]),
    "hands_reset": ("hands", "Hands", {}, [75, "reset", 240]),  # 75's hands not carried to 240
    "hands_still": ("hands", "Hands", {"static_image_mode": True}, ["astronaut"]),
    "face_detection": ("face_detection", "FaceDetection", {}, [0, 130, 195, "astronaut"]),
    "face_detection_full_range": ("face_detection", "FaceDetection", {"model_selection": 1},
                                  [195, "astronaut"]),
    "face_mesh": ("face_mesh", "FaceMesh", {"max_num_faces": 2}, [130, 195, 196]),
    "face_mesh_still": ("face_mesh", "FaceMesh", {"static_image_mode": True}, ["astronaut"]),
    "face_mesh_refined": ("face_mesh", "FaceMesh",
                          {"static_image_mode": True, "refine_landmarks": True}, ["astronaut"]),
    "pose": ("pose", "Pose", {"enable_segmentation": True}, [0, 1, 139]),
    "pose_still": ("pose", "Pose", {"static_image_mode": True}, ["astronaut"]),
    "selfie_segmentation": ("selfie_segmentation", "SelfieSegmentation", {}, [0, "astronaut"]),
    "selfie_segmentation_landscape": ("selfie_segmentation", "SelfieSegmentation",
                                      {"model_selection": 1}, [0]),
    "holistic": ("holistic", "Holistic", {}, [195, 196]),
    "holistic_still": ("holistic", "Holistic",
                       {"static_image_mode": True, "enable_segmentation": True}, ["astronaut"]),
}  # fmt: skip
CANVAS = (299, 401)  # rows, cols: not 4:3, and odd, so x and y scale apart and floor differs
DRAWING_INPUTS = {  # name -> (case, frame index in the case, field)
    "hands": ("hands", 2, "multi_hand_landmarks"),
    "face": ("face_mesh_refined", 0, "multi_face_landmarks"),
    "pose": ("pose", 0, "pose_landmarks"),
    "detections": ("face_detection", 2, "detections"),
    "holistic_pose": ("holistic", 0, "pose_landmarks"),
    "holistic_face": ("holistic", 0, "face_landmarks"),
    "holistic_left": ("holistic", 0, "left_hand_landmarks"),
    "holistic_right": ("holistic", 0, "right_hand_landmarks"),
}


# --- the API: names, signatures, constants ----------------------------------------------
def _signature(fn) -> list:
    """[name, kind, repr(default) or "<required>"] per parameter."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ["<no signature>"]
    return [[p.name, p.kind.name, "<required>" if p.default is p.empty else repr(p.default)]
            for p in params]  # fmt: skip


def _public_methods(cls) -> list[str]:
    names = []
    for name in dir(cls):
        if name.startswith("_") and name not in ("__init__", "__enter__", "__exit__"):
            continue
        if inspect.isfunction(getattr(cls, name, None)):
            names.append(name)
    return sorted(names)


def describe(value) -> dict:
    """A public name's kind and what a caller relies on: signatures, members, values."""
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return {"kind": "enum", "bases": [b.__name__ for b in value.__bases__],
                "members": {m.name: int(m.value) for m in value}}  # fmt: skip
    if isinstance(value, type):
        methods = {m: _signature(getattr(value, m)) for m in _public_methods(value)}
        return {"kind": "class", "bases": [b.__name__ for b in value.__mro__[1:-1]],
                "methods": methods}  # fmt: skip
    if callable(value):
        return {"kind": "function", "signature": _signature(value)}
    if isinstance(value, frozenset):  # in iteration order: drawing follows it
        return {"kind": "frozenset", "items": [[int(a), int(b)] for a, b in value]}
    return {"kind": type(value).__name__, "repr": repr(value)}


def public_names(module) -> dict:
    """The module's public names: not private, not a module, not a typing construct or a
    `from __future__` feature."""
    names = {}
    for name in sorted(dir(module)):
        value = getattr(module, name)
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if getattr(value, "__module__", None) == "typing" or type(value).__module__ == "__future__":
            continue
        names[name] = describe(value)
    return names


def describe_solutions(s) -> dict:
    """Every module of MODULES in `s` (an `mp.solutions`): its public names, described."""
    return {m: public_names(getattr(s, m)) for m in MODULES}


def describe_styles(s) -> dict:
    """Each default style as returned: [repr(key), repr(spec)] in order, or repr(spec)."""
    ds = s.drawing_styles
    out = {}
    for name in STYLES:
        for args in ((0,), (1,)) if name == "get_default_face_mesh_contours_style" else ((),):
            style = getattr(ds, name)(*args)
            key = f"{name}({', '.join(map(str, args))})"
            out[key] = (repr(style) if not isinstance(style, dict)
                        else [[repr(k), repr(v)] for k, v in style.items()])  # fmt: skip
    return out


def _outcome(fn) -> object:
    """[exception name, message] of what `fn()` raises, or "ok"."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 (recorded, not handled)
        return [type(exc).__name__, str(exc)]
    return "ok"


def solution_probes(solution) -> dict:
    """What SolutionBase does with bad input and around close(), on `solution` (fresh)."""
    out = {}
    for name, image in (("four_channels", np.zeros((8, 8, 4), np.uint8)),
                        ("gray", np.zeros((8, 8), np.uint8)),
                        ("float", np.zeros((8, 8, 3), np.float32))):  # fmt: skip
        out[f"process_{name}"] = _outcome(lambda image=image: solution.process(image))
    with solution as entered:
        out["enter_returns_self"] = entered is solution
    out["process_after_close"] = _outcome(lambda: solution.process(np.zeros((8, 8, 3), np.uint8)))
    out["reset_after_close"] = _outcome(solution.reset)
    out["close_twice"] = _outcome(solution.close)
    return out


def drawing_probes(du, landmark_list, detection) -> dict:
    """What drawing_utils (`du`) does with bad input; `landmark_list` and `detection` make
    an empty NormalizedLandmarkList and Detection."""
    four, gray, image = (np.zeros(shape, np.uint8) for shape in ((8, 8, 4), (8, 8), (8, 8, 3)))
    landmarks = landmark_list()
    landmarks.landmark.add(x=0.5, y=0.5, z=0.0)
    absolute = detection()
    absolute.location_data.format = 1  # BOUNDING_BOX
    relative = detection()
    relative.location_data.format = 2  # RELATIVE_BOUNDING_BOX
    return {
        "landmarks_four_channels": _outcome(lambda: du.draw_landmarks(four, landmarks)),
        "landmarks_gray": _outcome(lambda: du.draw_landmarks(gray, landmarks)),
        "landmarks_none": _outcome(lambda: du.draw_landmarks(four, None)),
        "landmarks_bad_connection": _outcome(lambda: du.draw_landmarks(image, landmarks, [(0, 3)])),
        "detection_four_channels": _outcome(lambda: du.draw_detection(four, relative)),
        "detection_not_relative": _outcome(lambda: du.draw_detection(image, absolute)),
        "axis_four_channels": _outcome(lambda: du.draw_axis(four, np.eye(3), np.zeros(3))),
    }


class Recorder:
    """A stand-in for matplotlib.pyplot (and the axes it makes) that records each call."""

    def __init__(self, calls=None, name="plt"):
        self.calls = [] if calls is None else calls
        self.name = name

    def __getattr__(self, attr):
        def call(*args, **kwargs):
            self.calls.append([f"{self.name}.{attr}", repr(args), repr(sorted(kwargs.items()))])
            return Recorder(self.calls, "ax") if attr == "axes" else None

        return call


def plot_calls(plot_landmarks, landmark_list, connections) -> list:
    """The pyplot calls of plot_landmarks(landmark_list, connections), as recorded; the
    caller points the function's pyplot at `plot_calls.recorder` first."""
    plot_landmarks(landmark_list, connections)
    return plot_calls.recorder.calls


# --- results ------------------------------------------------------------------------------
def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def value_record(value, text: bool) -> object:
    """One output value: None, {"list": [...]}, {"message": ...} or {"ndarray": ...}."""
    if value is None:
        return None
    if isinstance(value, list):
        return {"list": [value_record(v, text and i == 0) for i, v in enumerate(value)]}
    if isinstance(value, np.ndarray):
        import cv2

        h, w = value.shape[:2]
        q = cv2.resize(value.astype(np.float32), (w // 8, h // 8), interpolation=cv2.INTER_AREA)
        q8 = np.rint(np.clip(q, 0, 1) * 255).astype(np.uint8)
        return {"ndarray": str(value.dtype), "shape": list(value.shape),
                "writeable": bool(value.flags.writeable), "q8": _b64(q8.tobytes()),
                "q8_shape": list(q8.shape)}  # fmt: skip
    record = {"message": value.DESCRIPTOR.full_name, "type": type(value).__name__,
              "bytes": _b64(value.SerializeToString())}  # fmt: skip
    if text:
        record["text"] = str(value)
    return record


def result_record(result) -> dict:
    fields = list(result._fields)
    return {"fields": fields, "values": {f: value_record(getattr(result, f), True) for f in fields}}


def drawing_cases(s, inputs: dict) -> dict[str, np.ndarray]:
    """Every drawing of the fixture, made with `s.drawing_utils` and `s.drawing_styles` (an
    `mp.solutions`, MediaPipe's or the drop-in's) from `inputs` (name -> list of messages,
    DRAWING_INPUTS and "random": synthetic lists, "detections" ...)."""
    du, ds = s.drawing_utils, s.drawing_styles
    out = {}

    def draw(name, fn):
        image = np.full((*CANVAS, 3), 48, np.uint8)
        fn(image)
        out[name] = image

    def each(key, fn):
        return lambda image: [fn(image, m) for m in inputs[key]]

    hand_lms, hand_conns = (
        ds.get_default_hand_landmarks_style,
        ds.get_default_hand_connections_style,
    )
    hc, pc = s.hands.HAND_CONNECTIONS, s.pose.POSE_CONNECTIONS
    fm = s.face_mesh
    draw(
        "hands_styled",
        each("hands", lambda im, m: du.draw_landmarks(im, m, hc, hand_lms(), hand_conns())),
    )
    draw("hands_plain", each("hands", lambda im, m: du.draw_landmarks(im, m, hc)))
    draw(
        "face_tesselation",
        each(
            "face",
            lambda im, m: du.draw_landmarks(
                im,
                m,
                fm.FACEMESH_TESSELATION,
                landmark_drawing_spec=None,
                connection_drawing_spec=ds.get_default_face_mesh_tesselation_style(),
            ),
        ),
    )
    for i in (0, 1):
        draw(
            f"face_contours_{i}",
            each(
                "face",
                lambda im, m, i=i: du.draw_landmarks(
                    im,
                    m,
                    fm.FACEMESH_CONTOURS,
                    landmark_drawing_spec=None,
                    connection_drawing_spec=ds.get_default_face_mesh_contours_style(i),
                ),
            ),
        )
    draw(
        "face_irises",
        each(
            "face",
            lambda im, m: du.draw_landmarks(
                im,
                m,
                fm.FACEMESH_IRISES,
                landmark_drawing_spec=None,
                connection_drawing_spec=ds.get_default_face_mesh_iris_connections_style(),
            ),
        ),
    )
    draw("face_points", each("face", lambda im, m: du.draw_landmarks(im, m)))
    draw(
        "pose_styled",
        each(
            "pose",
            lambda im, m: du.draw_landmarks(
                im, m, pc, landmark_drawing_spec=ds.get_default_pose_landmarks_style()
            ),
        ),
    )
    draw(
        "pose_lines",
        each(
            "pose",
            lambda im, m: du.draw_landmarks(
                im,
                m,
                pc,
                connection_drawing_spec=du.DrawingSpec(color=(0, 255, 0), thickness=3),
                is_drawing_landmarks=False,
            ),
        ),
    )
    spec = du.DrawingSpec(color=(10, 200, 30), thickness=1, circle_radius=4)
    draw("random_specs", each("random", lambda im, m: du.draw_landmarks(im, m, pc, spec, spec)))
    point_specs = {
        i: du.DrawingSpec(
            color=(i * 7 % 256, 90, 255 - i), thickness=-1 if i % 2 else 2, circle_radius=i % 5
        )
        for i in range(33)
    }
    line_specs = {
        c: du.DrawingSpec(
            color=(c[0] * 9 % 256, c[1] * 5 % 256, 128), thickness=1 + (c[0] + c[1]) % 4
        )
        for c in pc
    }
    draw(
        "random_dict_specs",
        each("random", lambda im, m: du.draw_landmarks(im, m, pc, point_specs, line_specs)),
    )
    draw(
        "random_lines",
        each("random", lambda im, m: du.draw_landmarks(im, m, pc, landmark_drawing_spec=None)),
    )
    draw("detections", each("detections", lambda im, d: du.draw_detection(im, d)))
    draw(
        "detections_specs",
        each(
            "detections",
            lambda im, d: du.draw_detection(
                im,
                d,
                du.DrawingSpec(color=(255, 0, 255), thickness=-1, circle_radius=4),
                du.DrawingSpec(color=(0, 255, 255), thickness=3),
            ),
        ),
    )
    draw(
        "detections_synthetic", each("synthetic_detections", lambda im, d: du.draw_detection(im, d))
    )

    def axes(image):
        for i, (rvec, t) in enumerate(
            (
                ((0.3, -0.5, 0.2), (0.1, 0.0, -1.0)),
                ((2.0, 0.1, -0.4), (-0.2, 0.15, -0.8)),
                ((0.0, 0.0, 0.0), (0.0, 0.0, 0.5)),
            )
        ):  # behind: clipped
            c, s_ = np.cos(np.linalg.norm(rvec)), np.sin(np.linalg.norm(rvec))
            k = np.asarray(rvec) / max(np.linalg.norm(rvec), 1e-12)
            kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
            rotation = np.eye(3) * c + s_ * kx + (1 - c) * np.outer(k, k)  # Rodrigues
            du.draw_axis(
                image,
                rotation,
                np.asarray(t),
                focal_length=(1.0 + i, 1.5),
                principal_point=(0.1 * i, -0.05),
                axis_length=0.1 + 0.2 * i,
                axis_drawing_spec=du.DrawingSpec(thickness=1 + i),
            )
        du.draw_axis(image, np.eye(3), np.array([0.0, 0.0, -2.0]))

    draw("axis", axes)

    def holistic(image):
        if inputs["holistic_face"]:
            du.draw_landmarks(
                image,
                inputs["holistic_face"][0],
                s.holistic.FACEMESH_CONTOURS,
                landmark_drawing_spec=None,
                connection_drawing_spec=ds.get_default_face_mesh_contours_style(),
            )
        du.draw_landmarks(
            image,
            inputs["holistic_pose"][0],
            s.holistic.POSE_CONNECTIONS,
            landmark_drawing_spec=ds.get_default_pose_landmarks_style(),
        )
        for key in ("holistic_left", "holistic_right"):
            for m in inputs[key]:
                du.draw_landmarks(image, m, s.holistic.HAND_CONNECTIONS, hand_lms(), hand_conns())

    draw("holistic", holistic)
    return out


# --- the worker (inside the MediaPipe venv) ---------------------------------------------
def synthetic_inputs(landmark_pb2, detection_pb2) -> dict:
    """Landmark lists and detections no model gives: points outside [0, 1] and on its edges,
    visibility and presence set on some landmarks only, boxes at the edges."""
    rng = np.random.default_rng(1729)
    lists = []
    for _ in range(3):
        lms = landmark_pb2.NormalizedLandmarkList()
        points = rng.uniform(-0.1, 1.1, (33, 3)).astype(np.float32)
        points[:4, :2] = [(0.0, 0.0), (1.0, 1.0), (0.5, 1.0), (1.0, 0.25)]
        for i, (x, y, z) in enumerate(points.tolist()):
            lm = lms.landmark.add(x=x, y=y, z=z)
            if i % 3 == 1:
                lm.visibility = float(rng.uniform(0, 1))
            if i % 4 == 2:
                lm.presence = float(rng.uniform(0, 1))
        lists.append(lms)
    detections = []
    for xmin, ymin, w, h in ((0.0, 0.0, 0.3, 0.4), (0.6, 0.55, 0.4, 0.45), (0.25, 0.3, 0.2, 0.1)):
        d = detection_pb2.Detection(label_id=[0], score=[0.9])
        d.location_data.format = d.location_data.RELATIVE_BOUNDING_BOX
        box = d.location_data.relative_bounding_box
        box.xmin, box.ymin, box.width, box.height = xmin, ymin, w, h
        for kx, ky in rng.uniform(0, 1, (6, 2)).tolist():
            d.location_data.relative_keypoints.add(x=kx, y=ky)
        detections.append(d)
    no_box = detection_pb2.Detection()  # keypoints only: no rectangle
    no_box.location_data.format = no_box.location_data.RELATIVE_BOUNDING_BOX
    no_box.location_data.relative_keypoints.add(x=0.5, y=0.5)
    detections.append(no_box)
    return {"random": lists, "synthetic_detections": detections}


def worker(frames_file: str) -> None:
    """Runs inside the MediaPipe venv: every output file (imports nothing of this project)."""
    import mediapipe as mp
    from google.protobuf import descriptor_pb2
    from mediapipe.framework.formats import detection_pb2, landmark_pb2
    from mediapipe.python.solutions import drawing_utils

    s = mp.solutions
    with np.load(frames_file) as given:
        frames = {k: given[k] for k in given.files if k != "crc"}
        crc = {k: int(v) for k, v in zip(frames, given["crc"], strict=True)}
    api = {"mediapipe_version": mp.__version__, "modules": describe_solutions(s),
           "styles": describe_styles(s), "solution_errors": solution_probes(s.hands.Hands()),
           "drawing_errors": drawing_probes(s.drawing_utils, landmark_pb2.NormalizedLandmarkList,
                                            detection_pb2.Detection)}  # fmt: skip
    protos = {}
    for name in PROTOS:
        module = __import__(f"mediapipe.framework.formats.{name}_pb2", fromlist=["x"])
        fd = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(fd)
        fd.ClearField("options")  # Java and C++ options: nothing a Python caller sees
        protos[fd.name] = str(fd)
    fd = descriptor_pb2.FileDescriptorProto()
    detection_pb2.DESCRIPTOR.dependencies[0].dependencies[0].CopyToProto(fd)  # rasterization
    fd.ClearField("options")
    protos[fd.name] = str(fd)
    api["protos"] = protos

    results, messages = {}, {}
    for case, (module, cls, kwargs, keys) in RESULT_CASES.items():
        solution = getattr(getattr(s, module), cls)(**kwargs)
        records = []
        for key in keys:
            if key == "reset":
                solution.reset()
                continue
            res = solution.process(frames[str(key)])
            records.append(result_record(res))
            messages[(case, len(records) - 1)] = res
        solution.close()
        results[case] = {"module": module, "class": cls, "kwargs": kwargs,
                         "frames": keys, "results": records}  # fmt: skip
    inputs = {}
    for name, (case, index, field) in DRAWING_INPUTS.items():
        value = getattr(messages[(case, index)], field)
        inputs[name] = [] if value is None else value if isinstance(value, list) else [value]
    inputs |= synthetic_inputs(landmark_pb2, detection_pb2)
    drawings = drawing_cases(s, inputs)
    plot_calls.recorder = Recorder()
    drawing_utils.plt = plot_calls.recorder  # no figure: what plot_landmarks asks of pyplot
    api["plot_calls"] = plot_calls(drawing_utils.plot_landmarks, inputs["random"][0],
                                   s.pose.POSE_CONNECTIONS)  # fmt: skip

    API_OUT.write_bytes(gzip.compress(json.dumps(api, indent=1).encode(), mtime=0))
    payload = {"mediapipe_version": mp.__version__, "frame_crc32": crc, "cases": results}
    RESULTS_OUT.write_bytes(gzip.compress(json.dumps(payload).encode(), mtime=0))
    arrays = {f"image/{k}": v for k, v in drawings.items()}
    for name, msgs in inputs.items():
        for i, m in enumerate(msgs):
            arrays[f"input/{name}/{i}/{m.DESCRIPTOR.full_name}"] = np.frombuffer(
                m.SerializeToString(), np.uint8
            )
    np.savez_compressed(DRAWING_OUT, **arrays)
    print(f"{API_OUT.name}, {RESULTS_OUT.name} ({RESULTS_OUT.stat().st_size // 1024} KB), "
          f"{DRAWING_OUT.name} ({DRAWING_OUT.stat().st_size // 1024} KB): "
          f"{len(results)} cases, {len(drawings)} drawings")  # fmt: skip


# --- reading the fixtures, and frames (this project's venv and the tests) -----------------
def load_api() -> dict:
    return json.loads(gzip.decompress(API_OUT.read_bytes()))


def load_results() -> dict:
    return json.loads(gzip.decompress(RESULTS_OUT.read_bytes()))


def load_drawings() -> tuple[dict[str, np.ndarray], dict[str, list[tuple[str, bytes]]]]:
    """(drawing name -> MediaPipe's image, input name -> [(message full name, bytes)])."""
    images, inputs = {}, {name: [] for name in DRAWING_INPUTS}
    with np.load(DRAWING_OUT) as stored:
        for key in stored.files:
            kind, rest = key.split("/", 1)
            if kind == "image":
                images[rest] = stored[key]
                continue
            name, index, full_name = rest.split("/")
            inputs.setdefault(name, []).append((int(index), full_name, stored[key].tobytes()))
    return images, {k: [(n, b) for _, n, b in sorted(v)] for k, v in inputs.items()}


def case_frames(astronaut: Path) -> dict[str, np.ndarray]:
    """The RGB frames RESULT_CASES name: people.mp4's, each checked against people_clip.npz's
    CRC (so the side venv sees the pixels the tests decode), and the astronaut still."""
    import cv2

    keys = sorted({k for *_, ks in RESULT_CASES.values() for k in ks if isinstance(k, int)})
    with np.load(DATA / "people_clip.npz") as ref:
        crcs = ref["frame_crc32"]
    cap = cv2.VideoCapture(str(PEOPLE_CLIP))
    frames, i = {}, 0
    while i <= keys[-1]:
        ok, bgr = cap.read()
        if not ok:
            raise RuntimeError(f"{PEOPLE_CLIP}: ends at frame {i}")
        if i in keys:
            if zlib.crc32(np.ascontiguousarray(bgr).tobytes()) != int(crcs[i]):
                raise RuntimeError(f"{PEOPLE_CLIP}: frame {i} is not the one people_clip.npz "
                                   "was made from (another decoder?)")  # fmt: skip
            frames[str(i)] = np.ascontiguousarray(bgr[:, :, ::-1])
        i += 1
    cap.release()
    bgr = cv2.imread(str(astronaut))
    if bgr is None:
        raise FileNotFoundError(f"{astronaut}: run `engine-fetch samples`")
    frames["astronaut"] = np.ascontiguousarray(bgr[:, :, ::-1])
    return frames


def frame_crc(rgb: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(rgb).tobytes())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mp-python", default=None, help="python of a venv with mediapipe==0.10.14")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    import tempfile

    from benchmarks.app.mediapipe_compare import mediapipe_python
    from engine.catalog.paths import assets_dir

    frames = case_frames(assets_dir() / "astronaut.png")
    with tempfile.TemporaryDirectory() as tmp:
        given = Path(tmp) / "frames.npz"
        np.savez(given, **frames, crc=np.array([frame_crc(f) for f in frames.values()]))
        cmd = [mediapipe_python(args.mp_python), str(Path(__file__).resolve()), "--worker",
               str(given)]  # fmt: skip
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
