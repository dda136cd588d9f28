"""The 478 refined face landmarks from face_landmark_with_attention's outputs.

MediaPipe's TensorsToFaceLandmarksWithAttention (mediapipe/modules/face_landmark/
tensors_to_face_landmarks_with_attention.pbtxt at v0.10.14), written from its definition:
- input: the model's first six outputs, in the model's order: the 468-point mesh (x, y,
  z) and the lips (80), left eye (71), right eye (71), left iris (5) and right iris (5)
  (x, y), all in the 192x192 crop's pixels (the model's own TransformLandmarks already
  mapped the sub-crops back); the seventh output is the face flag
- output: [478, 3] crop-normalised landmarks: x / 192, y / 192, z / 192
  (TensorsToLandmarksCalculator; the 2-D outputs get z = 0 there)
- semantics: LandmarksRefinementCalculator: 478 landmarks (the largest mapped index + 1),
  the refinements applied in order, each writing x, y of its landmarks at its
  `mapping` and then its z mode: "copy" (the mesh: its z), "none" (lips, eyes: the z
  already there, the mesh's), "average" (irises: the mean z of `average` indices of the
  list refined so far, summed in double, stored as a float32, given to all five)
- usage: `lm = refine_face_landmarks(outputs_in_model_order)` -> [478, 3], then project
  to the frame as the 468 (engine/vision/landmarks.py project_to_frame)

The lips and eye mappings are also the subsets the model's Landmarks2TransformMatrix ops
crop around (their options in the file); the iris points 468-472 are the model's "left"
iris, drawn as MediaPipe's FACEMESH_RIGHT_IRIS (engine/vision/connections.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INPUT_SIZE = 192  # tensors_to_face_landmarks_with_attention.pbtxt: input_image_width/height
NUM_LANDMARKS = 478


@dataclass(frozen=True)
class Refinement:
    """One LandmarksRefinementCalculator refinement: where the landmarks of one model
    output go, and what becomes of z ("copy", "none" or "average" of `average`)."""

    name: str
    dims: int  # values per landmark in the model's output
    mapping: tuple[int, ...]
    z: str
    average: tuple[int, ...] = ()


LIPS = (
    # lower outer; upper outer (excluding corners)
    61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 185, 40, 39, 37, 0, 267, 269, 270, 409,
    # lower inner; upper inner (excluding corners)
    78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 191, 80, 81, 82, 13, 312, 311, 310, 415,
    # lower semi-outer; upper semi-outer (excluding corners)
    76, 77, 90, 180, 85, 16, 315, 404, 320, 307, 306, 184, 74, 73, 72, 11, 302, 303, 304, 408,
    # lower semi-inner; upper semi-inner (excluding corners)
    62, 96, 89, 179, 86, 15, 316, 403, 319, 325, 292, 183, 42, 41, 38, 12, 268, 271, 272, 407,
)  # fmt: skip
LEFT_EYE = (
    33, 7, 163, 144, 145, 153, 154, 155, 133,  # lower contour
    246, 161, 160, 159, 158, 157, 173,  # upper contour (excluding corners)
    130, 25, 110, 24, 23, 22, 26, 112, 243,  # halo x2 lower contour
    247, 30, 29, 27, 28, 56, 190,  # halo x2 upper contour (excluding corners)
    226, 31, 228, 229, 230, 231, 232, 233, 244,  # halo x3 lower contour
    113, 225, 224, 223, 222, 221, 189,  # halo x3 upper contour (excluding corners)
    35, 124, 46, 53, 52, 65,  # halo x4 upper contour or eyebrow inner contour
    143, 111, 117, 118, 119, 120, 121, 128, 245,  # halo x5 lower contour
    156, 70, 63, 105, 66, 107, 55, 193,  # halo x5 upper contour or eyebrow outer contour
)  # fmt: skip
RIGHT_EYE = (  # the same parts
    263, 249, 390, 373, 374, 380, 381, 382, 362,
    466, 388, 387, 386, 385, 384, 398,
    359, 255, 339, 254, 253, 252, 256, 341, 463,
    467, 260, 259, 257, 258, 286, 414,
    446, 261, 448, 449, 450, 451, 452, 453, 464,
    342, 445, 444, 443, 442, 441, 413,
    265, 353, 276, 283, 282, 295,
    372, 340, 346, 347, 348, 349, 350, 357, 465,
    383, 300, 293, 334, 296, 336, 285, 417,
)  # fmt: skip
# Each iris's z: the mean z of its eye's contour (the first 16 indices of the eye's mapping)
REFINEMENTS = (
    Refinement("mesh", 3, tuple(range(468)), "copy"),
    Refinement("lips", 2, LIPS, "none"),
    Refinement("left_eye", 2, LEFT_EYE, "none"),
    Refinement("right_eye", 2, RIGHT_EYE, "none"),
    Refinement("left_iris", 2, (468, 469, 470, 471, 472), "average", LEFT_EYE[:16]),
    Refinement("right_iris", 2, (473, 474, 475, 476, 477), "average", RIGHT_EYE[:16]),
)
OUTPUT_SIZES = tuple(len(r.mapping) * r.dims for r in REFINEMENTS) + (1,)  # + the face flag


def is_attention_model(sizes) -> bool:
    """Are `sizes` (values per model output, in order) face_landmark_with_attention's?"""
    return tuple(int(s) for s in sizes) == OUTPUT_SIZES


def check_outputs(sizes) -> None:
    """ValueError unless `sizes` (values per model output, in order) are the attention
    model's: 1404, 160, 142, 142, 10, 10 and the 1-value face flag."""
    if not is_attention_model(sizes):
        raise ValueError(
            f"outputs of {list(sizes)} values: expected face_landmark_with_attention's "
            f"{list(OUTPUT_SIZES)} (mesh, lips, eyes, irises, face flag)"
        )


def refine_face_landmarks(outputs) -> np.ndarray:
    """[478, 3] crop-normalised landmarks (float64) from the model's first six outputs
    (arrays in the model's order, crop pixels); see the module docstring."""
    refined = np.zeros((NUM_LANDMARKS, 3), np.float64)
    for r, raw in zip(REFINEMENTS, outputs, strict=False):
        lm = np.asarray(raw, np.float64).reshape(len(r.mapping), r.dims) / INPUT_SIZE
        idx = np.array(r.mapping)
        refined[idx, :2] = lm[:, :2]
        if r.z == "copy":
            refined[idx, 2] = lm[:, 2]
        elif r.z == "average":  # float32 landmarks, a double sum, a float32 result
            z = np.float32(refined[list(r.average), 2].astype(np.float32).astype(np.float64).mean())
            refined[idx, 2] = float(z)
    return refined
