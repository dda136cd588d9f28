"""MediaPipe's landmark custom ops on the GPU vs the float64 reference (no LiteRT kernel
exists; engine/reference/landmark_ops.py is written from their definitions and checked by
hand in tests/reference/test_landmark_ops.py), then face_landmark_with_attention, the
model that uses them, on the GPU vs the float64 reference interpreter.

Random inputs at fp32 and fp16 (fp16: inputs exactly representable in float16, so that
the comparison measures the kernel, not the rounding of a sampling coordinate that a
48-pixel map amplifies), buffers and, for TransformTensorBilinear, textures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.precision import precision as precision_of
from engine.reference import Interpreter
from tests.helpers.gpu import assert_padded_lanes_zero, gpu_context, texture_wrapped
from tests.helpers.single_op import single_op_graph

ctx = gpu_context()
F16 = pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
PRECISIONS = ["fp32", pytest.param("fp16", marks=F16)]

# face_landmark_with_attention's three sub-crops (tests/model/test_importer.py checks the
# file holds these): (left, right, subset)
LIPS = (61, 291, (61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 185, 40, 39, 37, 0, 267,
                  269, 270, 409, 78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 191, 80, 81,
                  82, 13, 312, 311, 310, 415, 76, 77, 90, 180, 85, 16, 315, 404, 320, 307, 306,
                  184, 74, 73, 72, 11, 302, 303, 304, 408, 62, 96, 89, 179, 86, 15, 316, 403,
                  319, 325, 292, 183, 42, 41, 38, 12, 268, 271, 272, 407))  # fmt: skip
EYE = (33, 133, (33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173,
                 130, 25, 110, 24, 23, 22, 26, 112, 243, 247, 30, 29, 27, 28, 56, 190, 226, 31,
                 228, 229, 230, 231, 232, 233, 244, 113, 225, 224, 223, 222, 221, 189, 35, 124,
                 46, 53, 52, 65, 143, 111, 117, 118, 119, 120, 121, 128, 245, 156, 70, 63, 105,
                 66, 107, 55, 193))  # fmt: skip


def _check(graph, feeds: dict, precision: str, storage: str = "buffer", data_tensors=()):
    """The engine (tensors poisoned first) vs the float64 reference, within the precision's
    tolerance x max(1, max|ref|); one submit, no CPU op; padded lanes 0. With textures the
    op runs between MAXIMUM(x, x) identities (tests/helpers/gpu.py) and `data_tensors`
    (its texture-capable inputs and outputs) must be textures."""
    run_graph = texture_wrapped(graph) if storage == "texture" else graph
    engine = Engine(run_graph, precision=precision, storage=storage, transforms=False)
    assert engine.fallback_ops == []
    for t in data_tensors:
        assert t in engine.placement.textures, engine.placement.reasons.get(t)
    engine.poison()
    got = engine.run(feeds)
    want = Interpreter(graph, np.float64).run(feeds)
    tol = precision_of(precision).tolerance
    for name, ref in want.items():
        assert np.isfinite(got[name]).all(), f"{name}: non-finite values (unwritten?)"
        err = float(np.abs(got[name].astype(np.float64) - ref).max())
        assert err <= tol * max(1.0, float(np.abs(ref).max())), f"{name}: max|diff| {err:.3g}"
    assert engine.stats.submits == 1
    assert_padded_lanes_zero(engine)


def _representable(x: np.ndarray, precision: str) -> np.ndarray:
    """`x` as float32, exactly representable in the precision's storage type."""
    return x.astype(precision_of(precision).dtype).astype(np.float32)


# --- Landmarks2TransformMatrix -----------------------------------------------------------


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize(
    ("sub", "target", "scale"),
    [(LIPS, 0.0, (1.5, 1.5)), (EYE, 0.0, (1.5, 1.5)), (EYE, 0.9, (1.0, 2.5)),
     (LIPS, -2.5, (0.7, 1.2))],
    ids=["lips", "eye", "eye-target", "lips-target"],
)  # fmt: skip
def test_landmarks_to_transform_matrix(sub, target, scale, precision):
    left, right, subset = sub
    attrs = {"left_rotation_idx": left, "right_rotation_idx": right, "subset_idxs": subset,
             "output_height": 16, "output_width": 12, "scale_x": scale[0], "scale_y": scale[1],
             "target_rotation_radians": target}  # fmt: skip
    graph = single_op_graph("Landmarks2TransformMatrix", [(1, 468, 3)], attrs, custom=True)
    rng = np.random.default_rng(11)
    for _ in range(3):  # the landmarks of a face in the 48-pixel feature map, any angle
        lm = rng.uniform(0, 48, (1, 468, 3)).astype(np.float32)
        _check(graph, {"input0": _representable(lm, precision)}, precision)


def test_landmarks_to_transform_matrix_on_a_vertical_and_a_degenerate_line():
    # L directly above R (atan2 = -pi/2), then L = R (atan2(0, 0) = 0): the GPU takes the
    # angle from the line's unit vector, and (1, 0) for a zero-length line.
    attrs = {"left_rotation_idx": 0, "right_rotation_idx": 1, "subset_idxs": (2, 3, 4),
             "output_height": 16, "output_width": 16, "scale_x": 1.5, "scale_y": 1.5,
             "target_rotation_radians": 0.0}  # fmt: skip
    graph = single_op_graph("Landmarks2TransformMatrix", [(1, 5, 3)], attrs, custom=True)
    points = [[5, 9, 0], [5, 2, 0], [1, 2, 3], [8, 4, 0], [3, 7, 1]]
    for right in ([5, 2, 0], [5, 9, 0]):
        lm = np.array([[points[0], right, *points[2:]]], np.float32)
        _check(graph, {"input0": lm}, "fp32")


# --- TransformTensorBilinear -------------------------------------------------------------


def _affine(rng: np.random.Generator) -> np.ndarray:
    """A sub-crop's matrix: any rotation, a scale, a shift that puts part of the 16x16
    crop outside the 48x48 map."""
    angle, sx, sy = rng.uniform(-math.pi, math.pi), rng.uniform(0.3, 2.0), rng.uniform(0.3, 2.0)
    c, s = math.cos(angle), math.sin(angle)
    m = np.eye(4)
    m[:2, :2] = [[c * sx, -s * sy], [s * sx, c * sy]]
    m[:2, 3] = rng.uniform(-8, 56, 2)
    return m.reshape(1, 4, 4).astype(np.float32)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("storage", ["buffer", "texture"])
@pytest.mark.parametrize(("data", "out"), [((1, 48, 48, 32), (16, 16)), ((1, 13, 9, 6), (5, 7))])
def test_transform_tensor_bilinear(data, out, storage, precision):
    attrs = {"output_height": out[0], "output_width": out[1]}
    graph = single_op_graph("TransformTensorBilinear", [data, (1, 4, 4)], attrs, custom=True)
    rng = np.random.default_rng(12)
    for _ in range(3):
        x = rng.uniform(-2, 2, data).astype(np.float32)
        m = _affine(rng)
        if precision == "fp16":  # entries whose products with pixel indices are exact too
            m = np.round(m * 64) / 64
        feeds = {"input0": _representable(x, precision), "input1": _representable(m, precision)}
        io = (graph.inputs[0], graph.outputs[0])
        _check(graph, feeds, precision, storage, io if storage == "texture" else ())


def test_transform_tensor_bilinear_samples_on_the_edges():
    # Integer and half-integer sampling points on the data's edges (tc = 0, W - 1 exactly):
    # inside, with the neighbours past the edge read as 0 at weight 0.
    graph = single_op_graph("TransformTensorBilinear", [(1, 6, 5, 4), (1, 4, 4)],
                            {"output_height": 7, "output_width": 6}, custom=True)  # fmt: skip
    x = np.random.default_rng(13).uniform(-1, 1, (1, 6, 5, 4)).astype(np.float32)
    for t in ([1, 0, 0, 0, 0, 1, 0, 0], [1, 0, 0, -1, 0, 1, 0, 0.5], [0.5, 0, 0, 0.25, 0, 1, 0,
                                                                      -0.5]):  # fmt: skip
        m = np.eye(4, dtype=np.float32)
        m[:2] = np.reshape(t, (2, 4))
        _check(graph, {"input0": x, "input1": m[None]}, "fp32")


# --- TransformLandmarks ------------------------------------------------------------------


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("shape", [(1, 80, 2), (1, 5, 2), (1, 71, 3), (1, 130, 2)])
def test_transform_landmarks(shape, precision):
    graph = single_op_graph("TransformLandmarks", [shape, (1, 4, 4)], {}, custom=True)
    rng = np.random.default_rng(14)
    lm = rng.uniform(0, 16, shape).astype(np.float32)
    m = np.round(_affine(rng) * 64) / 64
    m[0, :2, 2] = [3.0, -5.0]  # the z column: multiplied by 0
    feeds = {"input0": _representable(lm, precision), "input1": _representable(m, precision)}
    _check(graph, feeds, precision)


# --- the model: face_landmark_with_attention ---------------------------------------------

FACE_FRAME = 95  # the people clip (tests/data/mediapipe/people.mp4): two faces; MediaPipe's refined landmarks give a face's ROI


def _face_crop(name: str) -> dict:
    """The first face of FACE_FRAME cropped as FaceMesh crops it (the ROI of MediaPipe's
    own 478 landmarks, 192x192, border replicate, [0, 1])."""
    from benchmarks.fidelity.people import load_frames
    from engine.vision.image_to_tensor import image_to_tensor
    from engine.vision.roi import rect_matrix
    from engine.vision.tracking import roi_from_landmarks

    ref, (rgb,) = load_frames(FACE_FRAME, 1)
    size = tuple(int(v) for v in ref["size"])
    lm = ref["fmr_landmarks"][ref["fmr_frame"] == FACE_FRAME][0]
    rect = roi_from_landmarks(lm[:, :2] * size, size)
    x = image_to_tensor(rgb, rect_matrix(rect, size), (192, 192), (0.0, 1.0), "replicate")
    return {name: x}


# fp16 with textures (storage "auto" at fp16 on lavapipe) in the default tier, 4-5 s; the
# other three slow (the default tier's fidelity cases run the model at fp32 with buffers)
MODEL_CASES = [
    pytest.param("fp32", "buffer", marks=pytest.mark.slow),
    pytest.param("fp32", "texture", marks=pytest.mark.slow),
    pytest.param("fp16", "buffer", marks=[F16, pytest.mark.slow]),
    pytest.param("fp16", "texture", marks=F16),
]


@pytest.mark.parametrize(("precision", "storage"), MODEL_CASES)
def test_attention_model_matches_the_float64_reference(precision, storage):
    from engine.model.importer import load_tflite
    from tests.helpers.files import model_file

    graph = load_tflite(model_file("face_landmark_with_attention"))
    engine = Engine(graph, precision=precision, storage=storage)
    assert engine.fallback_ops == [], engine.fallback_ops
    assert {op.type for op in engine.graph.ops} >= {"Landmarks2TransformMatrix",
                                                    "TransformTensorBilinear",
                                                    "TransformLandmarks"}  # fmt: skip
    reference = Interpreter(graph, np.float64)
    name = graph.tensors[graph.inputs[0]].name
    rng = np.random.default_rng(15)
    random = {name: rng.uniform(0, 1, (1, 192, 192, 3)).astype(np.float32)}
    tol = 1e-4 if precision == "fp32" else 5e-3  # as the other whole models (test_models.py)
    for feeds in (random, _face_crop(name)):
        engine.poison()
        got, want = engine.run(feeds), reference.run(feeds)
        for out, ref in want.items():
            err = float(np.abs(got[out] - ref).max()) / max(1.0, float(np.abs(ref).max()))
            assert err <= tol, f"{out}: relative error {err:.3g}"
    assert float(want["conv_faceflag"].reshape(-1)[0]) > 0.0  # the crop holds a face
