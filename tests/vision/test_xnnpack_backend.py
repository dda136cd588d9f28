"""The solutions' xnnpack backend: the choice from adapter facts, the fast pre-process
against the oracle, and the CPU twins against the GPU stages (engine/vision/backends/,
xnnpack.py, cpu_stages.py). Fidelity against MediaPipe on
this backend: tests/vision/test_fidelity*.py run it too."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from engine.errors import ModelError
from engine.vision import backends as backend
from engine.vision.image_to_tensor import image_to_tensor, subrect_matrix, warp_to_tensor

RNG = np.random.default_rng(zlib.crc32(b"test_xnnpack_backend"))


@pytest.mark.parametrize(
    ("asked", "adapter", "want"),
    [("auto", "llvmpipe", "xnnpack"), ("auto", "swiftshader", "xnnpack"),
     ("auto", "cpu", "xnnpack"), ("auto", "gpu", "webgpu"), ("webgpu", "llvmpipe", "webgpu"),
     ("xnnpack", "gpu", "xnnpack"), ("xnnpack", None, "xnnpack")],
)  # fmt: skip
def test_backend_from_adapter_class(monkeypatch, asked, adapter, want):
    monkeypatch.setattr(backend, "litert_installed", lambda: True)
    assert backend.choose_backend(asked, adapter) == want


def test_auto_without_litert_stays_on_webgpu_and_says_how(monkeypatch):
    monkeypatch.setattr(backend, "litert_installed", lambda: False)
    with pytest.warns(UserWarning, match=r"pip install webgpu-ar\[cpu\]"):
        assert backend.choose_backend("auto", "llvmpipe") == "webgpu"
    assert backend.choose_backend("auto", "gpu") == "webgpu"  # no warning needed
    with pytest.raises(ValueError, match="backend must be one of"):
        backend.choose_backend("cpu", "gpu")


def test_refined_landmarks_stay_on_webgpu():
    """face_landmark_with_attention's MediaPipe custom ops have no LiteRT kernel: "auto"
    picks webgpu for the solutions that need it (tests/vision/test_solutions.py sees it run
    there), "xnnpack" is refused by option, before any adapter or model is opened."""
    from engine.vision import FaceMesh, Holistic

    assert backend.needs_webgpu("auto", "refine_landmarks") == "webgpu"
    assert backend.needs_webgpu("webgpu", "refine_landmarks") == "webgpu"
    with pytest.raises(ModelError, match=r"refine_landmarks=True .*Landmarks2TransformMatrix"):
        FaceMesh(refine_landmarks=True, backend="xnnpack")
    with pytest.raises(ModelError, match=r"refine_face_landmarks=True .*LiteRT has no kernel"):
        Holistic(refine_face_landmarks=True, backend="xnnpack")


def test_xnnpack_without_litert_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_litert(name, *args, **kwargs):
        if name.startswith("ai_edge_litert"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_litert)
    with pytest.raises(ModelError, match=r"pip install webgpu-ar\[cpu\]"):
        backend.require_litert()


@pytest.mark.parametrize("border", ["zero", "replicate"])
@pytest.mark.parametrize("channels", [3, 4])
def test_warp_to_tensor_equals_the_oracle(border, channels):
    """cv2.remap on the oracle's fixed-point coordinates: the same values, bit for bit,
    for rotated crops reaching past every edge, letterboxes and wide tensors."""
    image = RNG.integers(0, 256, (120, 160, channels), np.uint8)
    for k in range(12):
        m = subrect_matrix(RNG.uniform(-30, 190), RNG.uniform(-30, 150), RNG.uniform(8, 260),
                           RNG.uniform(8, 260), RNG.uniform(-3.2, 3.2))  # fmt: skip
        size = ((64, 64), (96, 48), (31, 17))[k % 3]
        want = image_to_tensor(image, m, size, (-1.0, 1.0), border)
        got = warp_to_tensor(image, m, size, (-1.0, 1.0), border)
        np.testing.assert_array_equal(got, want)


def test_warp_to_tensor_refuses_what_the_oracle_refuses():
    with pytest.raises(ValueError, match="8-bit"):
        warp_to_tensor(np.zeros((4, 4, 3), np.float32), subrect_matrix(2, 2, 4, 4), (4, 4))
    with pytest.raises(ValueError, match="border"):
        warp_to_tensor(np.zeros((4, 4, 3), np.uint8), subrect_matrix(2, 2, 4, 4), (4, 4),
                       border="wrap")  # fmt: skip
