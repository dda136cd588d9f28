"""The 478-point assembly (engine/vision/face_refinement.py) by hand, no GPU: the index maps
against the model file, x, y overwritten in order, the z modes, the iris z average."""

from __future__ import annotations

import numpy as np
import pytest

from engine.vision.face_refinement import (
    LEFT_EYE,
    LIPS,
    NUM_LANDMARKS,
    OUTPUT_SIZES,
    REFINEMENTS,
    RIGHT_EYE,
    check_outputs,
    refine_face_landmarks,
)
from tests.helpers.files import model_file


def _outputs(rng: np.random.Generator) -> list[np.ndarray]:
    """The model's six landmark outputs in crop pixels, shaped as the file's [1, 1, 1, n]."""
    return [rng.uniform(0, 192, (1, 1, 1, n)).astype(np.float32) for n in OUTPUT_SIZES[:-1]]


def test_the_maps_cover_478_landmarks_without_gaps():
    # LandmarksRefinementCalculator's count: the mapped indices from 0 with no gap
    mapped = {i for r in REFINEMENTS for i in r.mapping}
    assert mapped == set(range(NUM_LANDMARKS))
    assert [len(r.mapping) for r in REFINEMENTS] == [468, 80, 71, 71, 5, 5]
    assert all(len(set(r.mapping)) == len(r.mapping) for r in REFINEMENTS)


def test_the_sub_crops_of_the_model_are_the_refinement_maps():
    # The file's Landmarks2TransformMatrix ops crop around the very landmarks the lips and
    # eyes refine (two independent records of one fact: the file and the graph's pbtxt)
    from engine.model.importer import load_tflite

    graph = load_tflite(model_file("face_landmark_with_attention"))
    subsets = [op.attrs["subset_idxs"] for op in graph.ops
               if op.type == "Landmarks2TransformMatrix"]  # fmt: skip
    assert subsets == [LIPS, LEFT_EYE, RIGHT_EYE]
    sizes = [int(np.prod(graph.tensors[t].shape)) for t in graph.outputs]
    check_outputs(sizes)


def test_refinement_by_hand():
    rng = np.random.default_rng(21)
    outs = _outputs(rng)
    got = refine_face_landmarks(outs)
    mesh = outs[0].reshape(468, 3).astype(np.float64) / 192
    lips, left_eye, right_eye, left_iris, right_iris = (
        o.reshape(-1, 2).astype(np.float64) / 192 for o in outs[1:]
    )
    assert got.shape == (478, 3)
    # x, y: the last refinement that maps an index wins (mesh, then lips, eyes, irises)
    want_xy = np.zeros((478, 2))
    want_xy[:468] = mesh[:, :2]
    for part, idx in ((lips, LIPS), (left_eye, LEFT_EYE), (right_eye, RIGHT_EYE),
                      (left_iris, range(468, 473)), (right_iris, range(473, 478))):  # fmt: skip
        want_xy[list(idx)] = part
    np.testing.assert_array_equal(got[:, :2], want_xy)
    # z: the mesh's wherever the mesh mapped (lips and eyes keep it: "none")
    np.testing.assert_array_equal(got[:468, 2], mesh[:, 2])
    # the irises: the mean mesh z of their eye's 16 contour points, one value for all five
    for irises, eye in ((range(468, 473), LEFT_EYE), (range(473, 478), RIGHT_EYE)):
        want_z = np.float32(mesh[list(eye[:16]), 2].astype(np.float32).astype(np.float64).mean())
        assert (got[list(irises), 2] == float(want_z)).all()


def test_the_contours_averaged_are_the_eyes_first_sixteen():
    # tensors_to_face_landmarks_with_attention.pbtxt: lower contour (9) + upper contour
    # without the corners (7) of each eye
    left_iris, right_iris = REFINEMENTS[4], REFINEMENTS[5]
    assert left_iris.average == (33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159,
                                 158, 157, 173)  # fmt: skip
    assert right_iris.average == (263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387,
                                  386, 385, 384, 398)  # fmt: skip


def test_other_models_outputs_are_refused():
    with pytest.raises(ValueError, match="face_landmark_with_attention"):
        check_outputs([1404, 1])  # face_landmark's
