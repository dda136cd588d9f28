"""engine/gpu/quant_io.py: int8/uint8 graph I/O around the float path (numpy only)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.quant_io import integer_io, to_integer, to_real
from engine.model.ir import Graph, Op, Quantization, Tensor

Q = Quantization((0.05,), (-3,))


def test_integer_io_lists_quantized_inputs_and_outputs():
    g = Graph([Tensor("x", (1, 4), "int8", None, Q), Tensor("y", (1, 4), "float32")],
              [Op("DEQUANTIZE", (0,), (1,))], [0], [1])  # fmt: skip
    assert integer_io(g) == {"x": (Q, "int8")}


def test_round_trip_is_exact_on_the_grid():
    q = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)
    real = to_real("x", q, Q, "int8")
    assert real.dtype == np.float32
    np.testing.assert_array_equal(real, (q.astype(np.float32) + 3) * np.float32(0.05))
    np.testing.assert_array_equal(to_integer(real, Q, "int8"), q)


def test_to_integer_rounds_half_away_and_clamps():
    q = Quantization((0.25,), (-3,))  # a power of two: exact halves
    x = np.array([0.125, -0.875, 100.0, -100.0], np.float32)  # +0.5, -3.5 steps
    np.testing.assert_array_equal(to_integer(x, q, "int8"), [-2, -7, 127, -128])
    u8 = Quantization((0.25,), (128,))
    np.testing.assert_array_equal(to_integer(x, u8, "uint8"), [129, 124, 255, 0])


def test_wrong_feed_dtype_is_refused():
    with pytest.raises(ValueError, match="input 'x': dtype float32, expected int8"):
        to_real("x", np.zeros(3, np.float32), Q, "int8")
