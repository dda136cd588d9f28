"""Bad frames and mistyped options are clear errors, on every solution and both backends:
an empty frame (a side of 0), another dtype or channel count is a ValueError naming the
shape or dtype (before any model or GPU call: wgpu and OpenCV would fail later, unclearly);
an unknown keyword is the TypeError Python gives a mistyped argument, naming it."""

from __future__ import annotations

import numpy as np
import pytest

from engine.vision import SOLUTIONS
from tests.helpers.gpu import gpu_context

pytest.importorskip("ai_edge_litert.interpreter")
CTX = gpu_context()
BAD = [
    (np.zeros((0, 0, 3), np.uint8), r"empty: shape \(0, 0, 3\)"),
    (np.zeros((0, 10, 3), np.uint8), r"empty: shape \(0, 10, 3\)"),
    (np.zeros((10, 0, 3), np.uint8), r"empty: shape \(10, 0, 3\)"),
    (np.zeros((10, 10, 3), np.float32), r"dtype float32 shape \(10, 10, 3\)"),
    (np.zeros((10, 10, 2), np.uint8), r"dtype uint8 shape \(10, 10, 2\)"),
    (np.zeros((10, 10), np.uint8), r"dtype uint8 shape \(10, 10\)"),
]


@pytest.fixture(scope="module", params=[(s, b) for s in SOLUTIONS for b in ("webgpu", "xnnpack")],
                ids=lambda p: f"{p[0]}-{p[1]}")  # fmt: skip
def solution(request):
    name, backend = request.param
    with SOLUTIONS[name].solution_class()(context=CTX, backend=backend) as s:
        yield s


def test_bad_frames_are_value_errors_naming_them(solution):
    for frame, message in BAD:
        with pytest.raises(ValueError, match=message):
            solution.process(frame)
    good = np.zeros((48, 64, 3), np.uint8)  # and the solution still works after them
    assert solution.process(good).image_size == (64, 48)


@pytest.mark.parametrize("name", list(SOLUTIONS))
def test_a_mistyped_option_is_a_type_error_naming_it(name):
    cls = SOLUTIONS[name].solution_class()
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'max_num_face'"):
        cls(max_num_face=2, backend="xnnpack")
