"""engine/gpu/checks.check_device_limits and the compile guards, GPU-free: a program that
does not fit the adapter's limits, or a stage that fails on a file, is a one-line
ModelError naming the file, the op (index, type) or tensor, and which limit.

The limits are given as a Target (what compile knows of a device), so no adapter is
needed: a [1, 64, 64, 8] fp32 tensor is 64*64*2 slices*16 bytes = 131,072 bytes in PHWC4.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import ModelError
from engine.gpu.checks import BufferLimits
from engine.gpu.compile import CompileOptions, Target, compile_graph
from engine.model.ir import Graph, Op, Tensor

CONV = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "fused_activation_function": "NONE",
        "dilation_w_factor": 1, "dilation_h_factor": 1}  # fmt: skip


def conv_chain() -> Graph:
    """x [1,64,64,8] -> CONV_2D 3x3 -> y -> RELU -> z (y an intermediate, in the plan)."""
    w = np.ones((8, 3, 3, 8), np.float32)
    tensors = [
        Tensor("x", (1, 64, 64, 8), "float32"),
        Tensor("w", w.shape, "float32", w),
        Tensor("b", (8,), "float32", np.zeros(8, np.float32)),
        Tensor("y", (1, 64, 64, 8), "float32"),
        Tensor("z", (1, 64, 64, 8), "float32"),
    ]
    ops = [Op("CONV_2D", (0, 1, 2), (3,), dict(CONV)), Op("HARD_SWISH", (3,), (4,))]
    return Graph(tensors, ops, [0], [4], name="big.tflite")


def compile_with(**limits):
    target = Target(buffers=BufferLimits(**limits))
    return compile_graph(conv_chain(), CompileOptions(transforms=False), target)


def test_fits_the_webgpu_minimums():
    program = compile_with()
    assert program.dispatch_count >= 2


def test_a_tensor_over_the_binding_limit_names_op_and_tensor():
    with pytest.raises(ModelError) as err:
        compile_with(max_binding_bytes=100_000)
    message = str(err.value)
    assert message == (
        "big.tflite: op #0 CONV_2D: tensor 'x' [1, 64, 64, 8] needs 131,072 bytes, over this "
        "adapter's max-storage-buffer-binding-size of 100,000"
    )


def test_the_intermediates_over_the_buffer_limit():
    with pytest.raises(ModelError, match=r"^big\.tflite: the intermediate tensors' memory .* "
                       r"needs 131,072 bytes, over this adapter's max-buffer-size of 131,071$"):  # fmt: skip
        compile_with(max_buffer_bytes=131_071)


def test_a_dispatch_over_the_work_group_limit():
    with pytest.raises(ModelError, match=r"^big\.tflite: op #\d \w+: kernel \w+ needs \[.*\] work "
                       r"groups, over this adapter's max-compute-workgroups-per-dimension of 1$"):  # fmt: skip
        compile_with(max_groups=1)


def test_constants_over_the_binding_limit():
    with pytest.raises(ModelError, match=r"^big\.tflite: op #0 CONV_2D: kernel \w+'s constants "
                       r"needs [\d,]+ bytes, over this adapter's max-\w+-buffer-binding-size"):  # fmt: skip
        compile_with(max_binding_bytes=131_072, max_uniform_bytes=1024)


def test_an_empty_tensor_is_refused():
    g = conv_chain()
    g.tensors[0] = Tensor("x", (1, 0, 64, 8), "float32")
    with pytest.raises(
        ModelError, match=r"op #0 CONV_2D: tensor 'x' \[1, 0, 64, 8\] has no elements"
    ):
        compile_graph(g, CompileOptions(transforms=False))


def test_a_stage_failing_on_a_file_is_a_model_error(monkeypatch):
    """A kernel breaking on a combination validate.py let through: a ModelError naming the
    op, the original exception chained for whoever debugs the kernel."""
    from engine.gpu.kernels import elementwise

    def broken(self, op, graph, ctx):
        return [][1]  # IndexError, as a kernel indexing a shape it did not expect

    monkeypatch.setattr(elementwise.Unary, "build", broken)
    with pytest.raises(ModelError) as err:
        compile_graph(conv_chain(), CompileOptions(transforms=False))
    assert str(err.value) == (
        "big.tflite: op #1 HARD_SWISH: cannot compile (IndexError: list index out of range)"
    )
    assert isinstance(err.value.__cause__, IndexError)
