"""engine/precision.py: one object per precision carries every fact of it."""

import numpy as np
import pytest

from engine.precision import FP16, FP32, PRECISIONS, max_common_value, precision


def test_facts():
    assert list(PRECISIONS) == ["fp32", "fp16"]
    assert (FP32.element_bytes, FP32.vec4_bytes, FP32.wgsl) == (4, 16, "f32")
    assert (FP16.element_bytes, FP16.vec4_bytes, FP16.wgsl) == (2, 8, "f16")
    assert FP16.max_value == float(np.finfo(np.float16).max)
    assert FP32.max_value == float(np.finfo(np.float32).max)
    assert max_common_value() == FP16.max_value
    assert FP16.device_feature == "shader-f16" and FP32.device_feature is None
    assert float(FP32.lowest_wgsl) <= -FP32.max_value * 0.999999
    assert float(FP16.lowest_wgsl) == -FP16.max_value


def test_unknown_precision_names_the_known_ones():
    with pytest.raises(ValueError, match="fp32.*fp16"):
        precision("int8")
