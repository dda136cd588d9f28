"""WorkShape, KernelSignature, Candidate arithmetic and DeviceLimits.from_wgpu."""

from __future__ import annotations

import pytest

from engine.gpu.workgroups import Candidate, Choice, DeviceLimits, KernelSignature, WorkShape
from tests.helpers.workgroups import conv

LAVAPIPE_INFO = {
    "vendor": "llvmpipe",
    "device": "llvmpipe (LLVM 15.0.6, 256 bits)",
    "description": "Mesa 22.3.6 (LLVM 15.0.6)",
    "stackgroup_min_size": 4,
    "stackgroup_max_size": 128,
    "adapter_type": "CPU",
    "backend_type": "Vulkan",
}
LAVAPIPE_LIMITS = {
    "max-compute-invocations-per-workgroup": 1024,
    "max-compute-workgroup-size-x": 1024,
    "max-compute-workgroup-size-y": 1024,
    "max-compute-workgroup-size-z": 1024,
    "max-compute-workgroups-per-dimension": 65535,
}


def test_signature_validation_and_key():
    with pytest.raises(ValueError, match="space"):
        KernelSignature("k", (0, 1, 1))
    with pytest.raises(ValueError, match="unique"):
        KernelSignature("k", (1, 1, 1), work=(WorkShape(), WorkShape()))
    with pytest.raises(ValueError, match=">= 1"):
        WorkShape(0, 1, 1)
    assert conv().key() == "conv2d|conv|32x32x8|b16|4x1x4,2x1x2,4x1x1,1x1x1|k=3,s=1"
    assert conv().key() != conv(space=(32, 32, 4)).key()


def test_candidate_grid_and_waste():
    c = Candidate((8, 4, 1), WorkShape(4, 1, 2))
    assert c.size == 32 and c.covered == (32, 4, 2)
    assert c.groups((100, 8, 3)) == (4, 2, 2)
    assert c.waste((100, 8, 3)) == pytest.approx(128 * 8 * 4 / (100 * 8 * 3) - 1)
    assert Candidate((4, 1, 1), WorkShape()).waste((8, 1, 1)) == 0
    choice = Choice.of(c, "table")
    assert choice.candidate == c and choice.source == "table"


def test_from_wgpu_lavapipe(monkeypatch):
    monkeypatch.setenv("LP_NUM_THREADS", "6")
    lim = DeviceLimits.from_wgpu(LAVAPIPE_LIMITS, LAVAPIPE_INFO)
    assert lim.max_invocations == 1024 and lim.max_size == (1024, 1024, 1024)
    assert lim.max_groups == 65535
    # 4..128 is the placeholder: a CPU adapter's subgroup is llvmpipe's SIMD width
    monkeypatch.setenv("LP_NATIVE_VECTOR_WIDTH", "256")
    lim = DeviceLimits.from_wgpu(LAVAPIPE_LIMITS, LAVAPIPE_INFO)
    assert (lim.subgroup_min, lim.subgroup_max) == (8, 8)
    monkeypatch.setenv("LP_NATIVE_VECTOR_WIDTH", "128")
    assert DeviceLimits.from_wgpu(LAVAPIPE_LIMITS, LAVAPIPE_INFO).subgroup_max == 4
    assert lim.parallel_units == 6
    monkeypatch.setenv("LP_NUM_THREADS", "64")
    assert DeviceLimits.from_wgpu(LAVAPIPE_LIMITS, LAVAPIPE_INFO).parallel_units == 32
    assert DeviceLimits.from_wgpu(LAVAPIPE_LIMITS, LAVAPIPE_INFO, 3).parallel_units == 3


def test_from_wgpu_depends_on_the_adapter_not_the_machine(monkeypatch):
    monkeypatch.delenv("LP_NUM_THREADS", raising=False)
    monkeypatch.delenv("LP_NATIVE_VECTOR_WIDTH", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 64)  # a bigger machine: same choices
    lim = DeviceLimits.from_wgpu(LAVAPIPE_LIMITS, LAVAPIPE_INFO)
    assert (lim.subgroup_min, lim.subgroup_max) == (8, 8)  # "256 bits" in the device name
    assert lim.parallel_units == 8
    swiftshader = {**LAVAPIPE_INFO, "device": "SwiftShader Device (Subzero)"}
    assert DeviceLimits.from_wgpu(LAVAPIPE_LIMITS, swiftshader).subgroup_max == 4


def test_from_wgpu_gpu_and_defaults():
    info = {"adapter_type": "DiscreteGPU", "subgroup_min_size": 32, "subgroup_max_size": 64}
    limits = {"max_compute_invocations_per_workgroup": 512}  # underscores are read too
    lim = DeviceLimits.from_wgpu(limits, info)
    assert (lim.subgroup_min, lim.subgroup_max) == (32, 64)
    assert lim.parallel_units is None and lim.max_invocations == 512
    assert DeviceLimits.from_wgpu({}, {}) == DeviceLimits()


def test_limits_validation():
    with pytest.raises(ValueError):
        DeviceLimits(subgroup_min=64, subgroup_max=32)
    with pytest.raises(ValueError):
        DeviceLimits(parallel_units=0)
