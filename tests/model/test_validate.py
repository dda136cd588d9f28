"""engine/model/validate.py: a graph that breaks the schema or the op table is one ModelError
naming the file, the op (index, type) or the tensor, and what is wrong; real models pass.

The broken graphs are a two-op chain (CONV_2D 3x3 SAME -> RELU) with one thing changed, so
each case shows which rule fires. Expected shapes come from TFLite's rules, not ours: a
SAME conv of stride s gives ceil(in / s) (tensorflow/lite/kernels/padding.h).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.errors import ModelError
from engine.model.ir import Graph, Op, Tensor
from engine.model.validate import MAX_ELEMENTS, validate
from tests.helpers.files import fetched_models

CONV = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "fused_activation_function": "NONE",
        "dilation_w_factor": 1, "dilation_h_factor": 1}  # fmt: skip


def chain(**changes) -> Graph:
    """x [1,8,8,3] -> CONV_2D (w [4,3,3,3], b [4]) -> y [1,8,8,4] -> RELU -> z."""
    w = np.zeros((4, 3, 3, 3), np.float32)
    tensors = [
        Tensor("x", (1, 8, 8, 3), "float32"),
        Tensor("w", w.shape, "float32", w),
        Tensor("b", (4,), "float32", np.zeros(4, np.float32)),
        Tensor("y", (1, 8, 8, 4), "float32"),
        Tensor("z", (1, 8, 8, 4), "float32"),
    ]
    ops = [Op("CONV_2D", (0, 1, 2), (3,), dict(CONV)), Op("RELU", (3,), (4,))]
    g = Graph(tensors, ops, [0], [4], name="m.tflite")
    for key, value in changes.items():
        setattr(g, key, value)
    return g


def with_tensor(t: int, **fields) -> Graph:
    g = chain()
    g.tensors[t] = replace(g.tensors[t], **fields)
    return g


def with_op(i: int, **fields) -> Graph:
    g = chain()
    g.ops[i] = replace(g.ops[i], **fields)
    return g


def test_the_chain_is_valid():
    validate(chain())


@pytest.mark.parametrize(
    "graph, match",
    [
        (with_op(0, inputs=(-1, 1, 2)), r"op #0 CONV_2D: input 0 is left out \(-1\)"),
        (with_op(0, inputs=(0, 1, 9)), r"op #0 CONV_2D: input 2 refers to missing tensor 9 \(of 5\)"),
        (with_op(1, outputs=(-3,)), r"op #1 RELU: output 0 refers to missing tensor -3"),
        (with_op(1, inputs=(3, 3)), r"op #1 RELU: has 2 inputs, expected 1"),
        (with_op(0, inputs=(0,)), r"op #0 CONV_2D: has 1 inputs, expected 2 to 3"),
        (with_op(0, inputs=(4, 1, 2)), r"op #0 CONV_2D: input 0 tensor 4 'z' .* is read before"),
        (with_op(1, outputs=(3,)), r"op #1 RELU: output 0 tensor 3 'y' is already written"),
        (with_op(1, outputs=(1,)), r"op #1 RELU: output 0 tensor 1 'w' is a constant"),
        (chain(outputs=[7]), r"graph output refers to missing tensor 7"),
        (chain(inputs=[1]), r"graph input tensor 1 'w' .* is a constant"),
        (chain(outputs=[0, 4], inputs=[]), r"op #0 CONV_2D: input 0 tensor 0 'x'.* read before"),
    ],
)  # fmt: skip
def test_indices_arity_and_order(graph, match):
    with pytest.raises(ModelError, match=r"^m\.tflite: " + match):
        validate(graph)


@pytest.mark.parametrize(
    "graph, match",
    [
        (with_tensor(3, shape=(1, -8, 8, 4)), r"tensor 3 'y' \[1, -8, 8, 4\] \(op #0 CONV_2D\) has a negative"),
        (with_tensor(0, shape=(1, 65536, 65536, 3)), r"tensor 0 'x' .* elements \(at most"),
        (with_tensor(0, shape=(1,) * 9), r"tensor 0 'x' .* has rank 9"),
        (with_tensor(0, signature=(1, 8, 8)), r"tensor 0 'x' .* shape signature \[1, 8, 8\]"),
        (with_tensor(1, dtype="int32"), r"op #0 CONV_2D: input 1 'w' is int32, expected"),
        (with_tensor(0, dtype="bool"), r"op #0 CONV_2D: input 0 'x' is bool"),
        (with_tensor(2, shape=(1, 4), data=np.zeros((1, 4), np.float32)), r"op #0 CONV_2D: input 2 'b' \[1, 4\] has rank 2, expected 1"),
        (with_tensor(2, shape=(5,), data=np.zeros(5, np.float32)), r"op #0 CONV_2D: bias \[5\] for 4 output"),
        (with_tensor(3, shape=(1, 8, 7, 4)), r"op #0 CONV_2D: output 'y' is declared \[1, 8, 7, 4\] but its inputs .* give \[1, 8, 8, 4\]"),
        (with_tensor(4, shape=(1, 8, 8, 5)), r"op #1 RELU: output 'z' is declared"),
    ],
)  # fmt: skip
def test_shapes_and_types(graph, match):
    with pytest.raises(ModelError, match=r"^m\.tflite: " + match):
        validate(graph)


@pytest.mark.parametrize(
    "attrs, match",
    [
        ({"stride_h": 0}, r"option stride_h is 0 \(must be >= 1\)"),
        ({"dilation_w_factor": -1}, r"option dilation_w_factor is -1 \(must be >= 1\)"),
        ({"padding": 100}, r"padding 100 is not SAME or VALID"),
        ({"fused_activation_function": 42}, r"unknown fused activation 42"),
        ({"stride_h": 2}, r"output 'y' is declared \[1, 8, 8, 4\] but .* give \[1, 4, 8, 4\]"),
    ],
)
def test_options(attrs, match):
    g = with_op(0, attrs={**CONV, **attrs})
    with pytest.raises(ModelError, match=r"^m\.tflite: op #0 CONV_2D: " + match):
        validate(g)


def test_options_of_another_op_are_named():
    g = with_op(0, attrs={"block_size": 2})  # DepthToSpaceOptions on a CONV_2D
    with pytest.raises(ModelError, match=r"options lack \['padding', 'stride_w', 'stride_h'\]"):
        validate(g)


def test_window_larger_than_input():
    g = with_op(0, attrs={**CONV, "padding": "VALID", "dilation_h_factor": 8})
    with pytest.raises(ModelError, match=r"a 3x3 window \(dilation 8x1\) does not fit"):
        validate(g)


def test_an_optional_input_may_be_left_out():
    validate(with_op(0, inputs=(0, 1, -1)))


def test_limits_are_what_kernels_index():
    assert MAX_ELEMENTS == 2**31 - 1  # 32-bit element indices in the WGSL kernels


def test_messages_are_one_line():
    with pytest.raises(ModelError) as err:
        validate(with_tensor(3, shape=(1, 8, 7, 4)))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("path", fetched_models(), ids=lambda p: p.stem)
def test_every_fetched_model_is_valid(path):
    from engine.model.importer import load_tflite

    load_tflite(path)  # validates the graph as read, before folding
