"""MediaPipe's landmark custom ops (engine/reference/landmark_ops.py) on cases worked by hand.

LiteRT has no kernel for them, so these hand-worked results (from the C++ definitions,
mediapipe/util/tflite/operations/*.cc, v2) are what the float64 oracle is checked against;
the GPU kernels are then checked against the oracle (tests/gpu/test_landmark_ops.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.errors import ModelError
from engine.model.op_specs import Invalid, output_shapes
from engine.reference import Interpreter
from tests.helpers.single_op import single_op_graph

DTYPES = [np.float32, np.float64]


def _matrix_attrs(**extra) -> dict:
    attrs = {"left_rotation_idx": 0, "right_rotation_idx": 1, "subset_idxs": (2, 3),
             "output_height": 16, "output_width": 16, "scale_x": 1.5, "scale_y": 1.5,
             "target_rotation_radians": 0.0}  # fmt: skip
    return {**attrs, **extra}


def _run(op_type: str, inputs: list, attrs: dict, dtype=np.float64) -> np.ndarray:
    """The op on constant-free inputs: every array in `inputs` is fed as a graph input."""
    g = single_op_graph(op_type, [np.shape(x) for x in inputs], attrs, custom=True)
    feeds = {f"input{k}": np.asarray(x, np.float32) for k, x in enumerate(inputs)}
    out = Interpreter(g, dtype).run(feeds)["output0"]
    assert out.dtype == dtype
    return out


def _landmarks(*points) -> np.ndarray:
    """[1, N, 3] from (x, y) points (z = 7: the op must ignore it)."""
    return np.array([[[x, y, 7.0] for x, y in points]])


# --- Landmarks2TransformMatrix -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_of_an_upright_box(dtype):
    # L -> R along +x: no rotation. The subset's box [2, 10] x [4, 8]: 8 x 4 about (6, 6);
    # scale 1.5 * 8 / 16 = 0.75 and 1.5 * 4 / 16 = 0.375; the sub-crop's centre (8, 8)
    # goes to (6, 6): shift 6 - 0.75 * 8 = 0, 6 - 0.375 * 8 = 3.
    lm = _landmarks((0, 0), (1, 0), (2, 4), (10, 8))
    got = _run("Landmarks2TransformMatrix", [lm], _matrix_attrs(), dtype)
    want = [[0.75, 0, 0, 0], [0, 0.375, 0, 3], [0, 0, 1, 0], [0, 0, 0, 1]]
    np.testing.assert_allclose(got[0], want, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_of_a_box_turned_90_degrees(dtype):
    # L -> R along +y: atan2 = pi/2, rotation -pi/2. The points rotated by -90 degrees
    # ((x, y) -> (y, -x)): (4, -2), (8, -10): a 4 x 8 box about (6, -6), back by +90
    # degrees: centre (6, 6). Matrix = Shift(6, 6) Rot(90) Scale(0.375, 0.75) Shift(-8, -8):
    # rows (0, -0.75, 0, 12) and (0.375, 0, 0, 3).
    lm = _landmarks((0, 0), (0, 1), (2, 4), (10, 8))
    got = _run("Landmarks2TransformMatrix", [lm], _matrix_attrs(), dtype)
    want = [[0, -0.75, 0, 12], [0.375, 0, 0, 3], [0, 0, 1, 0], [0, 0, 0, 1]]
    np.testing.assert_allclose(got[0], want, atol=1e-6)


def test_matrix_with_a_target_rotation():
    # target pi/2, L -> R along +x: rotation pi/2. The points rotated by +90 degrees
    # ((x, y) -> (-y, x)): (-4, 2), (-8, 10): a 4 x 8 box about (-6, 6), back by -90
    # degrees: centre (6, 6). Shift(6, 6) Rot(-90) Scale(0.375, 0.75) Shift(-8, -8): rows
    # (0, 0.75, 0, 0) and (-0.375, 0, 0, 9).
    lm = _landmarks((0, 0), (1, 0), (2, 4), (10, 8))
    attrs = _matrix_attrs(target_rotation_radians=math.pi / 2)
    got = _run("Landmarks2TransformMatrix", [lm], attrs)
    want = [[0, 0.75, 0, 0], [-0.375, 0, 0, 9], [0, 0, 1, 0], [0, 0, 0, 1]]
    np.testing.assert_allclose(got[0], want, atol=1e-6)


def test_matrix_of_an_odd_subset_of_one_point():
    # The parser pairs an odd last index with itself; one point is a zero-size box: the
    # sub-crop shrinks to that point whatever the rotation.
    lm = _landmarks((0, 0), (3, 1), (5, -2))
    got = _run("Landmarks2TransformMatrix", [lm], _matrix_attrs(subset_idxs=(2,)))
    want = [[0, 0, 0, 5], [0, 0, 0, -2], [0, 0, 1, 0], [0, 0, 0, 1]]
    np.testing.assert_allclose(got[0], want, atol=1e-9)


def test_matrix_maps_the_subcrop_onto_the_rotated_box():
    # Any rotation: the sub-crop's corners land on the corners of the subset's box,
    # enlarged by the scale, rotated like the L -> R line.
    rng = np.random.default_rng(3)
    angle = 0.7
    axis = np.array([math.cos(angle), math.sin(angle)])
    normal = np.array([-axis[1], axis[0]])
    box = [(u, v) for u in (-3.0, 5.0) for v in (-2.0, 4.0)]
    inner = [(rng.uniform(-3, 5), rng.uniform(-2, 4)) for _ in range(5)]
    origin = np.array([40.0, 30.0])
    points = [origin + u * axis + v * normal for u, v in box + inner]
    lm = _landmarks(origin, origin + axis, *points)
    attrs = _matrix_attrs(subset_idxs=tuple(range(2, 2 + len(points))), output_width=8,
                          output_height=4, scale_x=2.0, scale_y=1.0)  # fmt: skip
    m = _run("Landmarks2TransformMatrix", [lm], attrs)[0]
    centre = origin + 1.0 * axis + 1.0 * normal  # the box's centre: (u, v) = (1, 1)
    for px, py, u, v in ((0, 0, -8, -3), (8, 0, 8, -3), (0, 4, -8, 3), (8, 4, 8, 3)):
        got = m @ [px, py, 0, 1]
        np.testing.assert_allclose(got[:2], centre + u * axis + v * normal, atol=1e-4)  # fp32 in


# --- TransformTensorBilinear -------------------------------------------------------------


def _data(h, w, c) -> np.ndarray:
    return np.arange(h * w * c, dtype=np.float64).reshape(1, h, w, c) + 1.0


def _affine(ax, bx, tx, ay, by, ty) -> np.ndarray:
    return np.array([[[ax, bx, 0, tx], [ay, by, 0, ty], [0, 0, 1, 0], [0, 0, 0, 1]]], np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bilinear_identity_copies_and_zeroes_past_the_edge(dtype):
    # The identity: the half-pixel correction cancels (0.5 + 0 - 0.5); output pixel
    # (x, y) reads input (x, y); past W - 1 / H - 1 it is 0.
    data = _data(3, 4, 5)
    out = _run("TransformTensorBilinear", [data, _affine(1, 0, 0, 0, 1, 0)],
               {"output_height": 4, "output_width": 6}, dtype)  # fmt: skip
    np.testing.assert_array_equal(out[0, :3, :4], data[0])
    assert not out[0, 3:].any() and not out[0, :, 4:].any()


def test_bilinear_downscale_by_two_averages_pixel_pairs():
    # x scale 2: t[3] = 0 + 0.5 * 2 - 0.5 = 0.5, so output x reads 2x + 0.5: the mean of
    # input columns 2x and 2x + 1 (rows as they are).
    data = _data(2, 6, 3)
    out = _run("TransformTensorBilinear", [data, _affine(2, 0, 0, 0, 1, 0)],
               {"output_height": 2, "output_width": 3})  # fmt: skip
    want = (data[0, :, 0::2] + data[0, :, 1::2]) / 2
    np.testing.assert_allclose(out[0], want, atol=1e-12)


def test_bilinear_crop_reading_outside_the_input():
    # Shifted by -0.5 and -1.25: output (x, y) reads (x - 0.5, y - 1.25). Column 0 and rows
    # 0, 1 fall before the input: 0. Row 2 reads y = 0.75 (rows 0, 1 blended 1:3), column x
    # reads x - 0.5 (columns x - 1, x half and half); the last column reads x = 3.5 on a
    # 4-wide input: outside (> W - 1).
    data = _data(3, 4, 2)
    out = _run("TransformTensorBilinear", [data, _affine(1, 0, -0.5, 0, 1, -1.25)],
               {"output_height": 4, "output_width": 5})[0]  # fmt: skip
    assert not out[:2].any() and not out[:, 0].any() and not out[:, 4].any()
    d = data[0]
    for x in (1, 2, 3):
        cols = (d[:, x - 1] + d[:, x]) / 2
        np.testing.assert_allclose(out[2, x], 0.25 * cols[0] + 0.75 * cols[1], atol=1e-12)
        np.testing.assert_allclose(out[3, x], 0.25 * cols[1] + 0.75 * cols[2], atol=1e-12)


def test_bilinear_rotation_by_90_degrees():
    # Rows (0, -1, 0, 3) and (1, 0, 0, 0): the correction adds -0.5 - 0.5 and 0.5 - 0.5, so
    # output (x, y) reads input (W - 1 - y, x) on a W = 3 input: a quarter turn.
    data = _data(4, 3, 2)
    out = _run("TransformTensorBilinear", [data, _affine(0, -1, 3, 1, 0, 0)],
               {"output_height": 3, "output_width": 4})[0]  # fmt: skip
    np.testing.assert_array_equal(out, np.rot90(data[0]))


def test_bilinear_last_row_and_column_are_inside():
    # tc exactly W - 1, H - 1 (2.5 - 0.5): inside; the neighbours past the edge read 0
    # with weight 0.
    data = _data(3, 3, 1)
    out = _run("TransformTensorBilinear", [data, _affine(0, 0, 2.5, 0, 0, 2.5)],
               {"output_height": 1, "output_width": 1})  # fmt: skip
    assert out.reshape(-1)[0] == data[0, 2, 2, 0]


# --- TransformLandmarks ------------------------------------------------------------------


@pytest.mark.parametrize("dims", [2, 3])
def test_transform_landmarks_by_hand(dims):
    # x' = 2x - y + 5, y' = 0.5x + 3y - 1 (column 2, the z weight, is ignored: z = 0); z kept.
    lm = np.array([[[1.0, 2.0, 9.0], [-3.0, 0.5, -4.0]]])[..., :dims]
    m = _affine(2, -1, 5, 0.5, 3, -1)
    m[0, 0, 2] = m[0, 1, 2] = 100.0
    out = _run("TransformLandmarks", [lm, m], {})[0]
    want = [[2 - 2 + 5, 0.5 + 6 - 1, 9.0], [-6 - 0.5 + 5, -1.5 + 1.5 - 1, -4.0]]
    np.testing.assert_allclose(out, np.array(want)[:, :dims], atol=1e-12)


# --- the op table's rules ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("op_type", "shapes", "attrs", "match"),
    [
        ("Landmarks2TransformMatrix", [(1, 4, 2)], _matrix_attrs(), "expected"),
        ("Landmarks2TransformMatrix", [(2, 4, 3)], _matrix_attrs(), "expected"),
        ("Landmarks2TransformMatrix", [(1, 4, 3)], _matrix_attrs(subset_idxs=()), "empty"),
        ("Landmarks2TransformMatrix", [(1, 4, 3)], _matrix_attrs(subset_idxs=(2, 4)),
         "outside"),
        ("Landmarks2TransformMatrix", [(1, 4, 3)], _matrix_attrs(scale_y=0.0), "scale"),
        ("Landmarks2TransformMatrix", [(1, 4, 3)], _matrix_attrs(output_width=0), ">= 1"),
        ("TransformTensorBilinear", [(1, 8, 8, 4), (1, 3, 4)],
         {"output_height": 2, "output_width": 2}, "16 values"),
        ("TransformTensorBilinear", [(2, 8, 8, 4), (1, 4, 4)],
         {"output_height": 2, "output_width": 2}, "batch"),
        ("TransformLandmarks", [(1, 5, 4), (1, 4, 4)], {}, "expected"),
        ("TransformLandmarks", [(1, 5, 2), (4, 3)], {}, "16 values"),
    ],
)  # fmt: skip
def test_rules_refuse_what_the_kernels_cannot_run(op_type, shapes, attrs, match):
    with pytest.raises(Invalid, match=match):
        output_shapes(op_type, attrs, shapes, [None] * len(shapes))


def test_rules_give_the_output_shapes():
    attrs = {"output_height": 16, "output_width": 12}
    assert output_shapes("TransformTensorBilinear", attrs, [(1, 48, 48, 32), (1, 4, 4)],
                         [None, None]) == [(1, 16, 12, 32)]  # fmt: skip
    assert output_shapes("Landmarks2TransformMatrix", _matrix_attrs(), [(1, 468, 3)], [None]) == [
        (1, 4, 4)
    ]
    assert output_shapes("TransformLandmarks", {}, [(1, 80, 2), (1, 4, 4)], [None, None]) == [
        (1, 80, 2)
    ]


def test_a_bad_op_in_a_graph_is_a_model_error():
    from engine.model.validate import validate

    g = single_op_graph("TransformLandmarks", [(1, 5, 2), (1, 4, 4)], {}, custom=True)
    g.tensors[g.ops[0].inputs[1]] = type(g.tensors[0])("m", (1, 4, 3), "float32")
    with pytest.raises(ModelError, match="16 values"):
        validate(g)
