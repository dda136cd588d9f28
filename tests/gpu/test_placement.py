"""Storage placement (engine/gpu/placement.py): pure Python, no adapter needed."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels.base import select
from engine.gpu.placement import BOTH, OpStorage, TextureLimits, op_storage, place
from engine.model.ir import Graph, Op, Tensor

BUF = frozenset({"buffer"})


def _chain(n_ops: int, shape=(1, 8, 8, 16), epilogue=None) -> Graph:
    """t0 -> op0 -> t1 -> op1 -> ... -> t{n}; t0 input, t{n} output."""
    tensors = [Tensor(f"t{i}", shape, "float32") for i in range(n_ops + 1)]
    ops = [Op("RELU", (i,), (i + 1,), {}) for i in range(n_ops)]
    if epilogue:
        i, kind, t = epilogue
        ops[i] = Op("RELU", (i,), (i + 1,), {"epilogue": ((kind, t),)})
    return Graph(tensors, ops, [0], [n_ops], name="chain")


def _caps(graph: Graph, kinds: list[frozenset | None]) -> list[OpStorage | None]:
    """Per op: None (CPU) or the kinds it reads every tensor from and writes outputs to."""
    from engine.model.ir import tensors_read

    out = []
    for op, k in zip(graph.ops, kinds, strict=True):
        if k is None:
            out.append(None)
            continue
        reads = {t: k for t in tensors_read(op)}
        out.append(OpStorage(reads, {t: k for t in op.outputs}))
    return out


def test_texture_where_producer_and_every_consumer_can():
    g = _chain(5)
    # op2 is buffer-only: t2 (its input) and t3 (its output) stay buffers.
    p = place(g, _caps(g, [BOTH, BOTH, BUF, BOTH, BOTH]), "texture")
    assert p.textures == {1, 4}
    assert "read by #2" in p.reasons[2] and "written by #2" in p.reasons[3]
    assert p.kind(1) == "texture" and p.kind(2) == "buffer"


def test_inputs_and_outputs_stay_buffers():
    g = _chain(2)
    p = place(g, _caps(g, [BOTH, BOTH]), "texture")
    assert p.textures == {1}
    assert 0 not in p.textures and 2 not in p.textures


def test_epilogue_operand_needs_a_texture_reader():
    g = _chain(4, epilogue=(3, "add", 1))  # op3 adds t1 (a residual) in its epilogue
    assert place(g, _caps(g, [BOTH] * 4), "texture").textures == {1, 2, 3}
    # op3 reads its epilogue operands from buffers only -> t1 and t3 (its input) buffers
    p = place(g, _caps(g, [BOTH, BOTH, BOTH, BUF]), "texture")
    assert p.textures == {2}
    assert "read by #3" in p.reasons[1]


def test_cpu_ops_take_either_kind():
    g = _chain(3)
    assert place(g, _caps(g, [BOTH, None, BOTH]), "texture").textures == {1, 2}


def test_buffer_storage_and_limits():
    g = _chain(3)
    caps = _caps(g, [BOTH] * 3)
    p = place(g, caps, "buffer")
    assert p.textures == frozenset() and set(p.reasons) == {1, 2}
    wide = _chain(3, shape=(1, 2, 3, 1200))  # 300 slices > 256 layers
    p = place(wide, _caps(wide, [BOTH] * 3), "texture", TextureLimits(8192, 256))
    assert p.textures == frozenset() and "limits" in p.reasons[1]
    tall = _chain(3, shape=(1, 9000, 2, 4))
    assert place(tall, _caps(tall, [BOTH] * 3), "texture").textures == frozenset()


def test_bad_arguments():
    g = _chain(2)
    with pytest.raises(ValueError, match="storage"):
        place(g, _caps(g, [BOTH, BOTH]), "auto")
    with pytest.raises(ValueError, match="capabilities"):
        place(g, _caps(g, [BOTH, BOTH])[:1], "texture")


def test_op_storage_from_kernels():
    """conv (texture-capable) and RESHAPE (buffer-only) as registered."""
    w = np.zeros((8, 3, 3, 4), np.float32)
    tensors = [
        Tensor("x", (1, 6, 6, 4), "float32"),
        Tensor("w", w.shape, "float32", w),
        Tensor("y", (1, 6, 6, 8), "float32"),
        Tensor("z", (1, 36, 8), "float32"),
    ]
    attrs = {"padding": "SAME", "stride_h": 1, "stride_w": 1}
    ops = [Op("CONV_2D", (0, 1), (2,), attrs), Op("RESHAPE", (2,), (3,), {"new_shape": (1, 36, 8)})]
    g = Graph(tensors, ops, [0], [3])
    conv = op_storage(select(ops[0], g), ops[0], g)
    assert conv.reads[0] == BOTH and conv.writes[2] == BOTH
    reshape = op_storage(select(ops[1], g), ops[1], g)
    assert reshape is not None and reshape.reads[2] == BUF
    assert op_storage(None, ops[1], g) is None
    assert place(g, [conv, reshape], "texture").textures == frozenset()  # y read by RESHAPE
