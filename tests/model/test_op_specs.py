"""The op table (engine/model/op_specs.py, elementwise.py) and the kernels that register
themselves under its op names agree."""

from __future__ import annotations

from engine.gpu.kernels.base import gpu_op_types
from engine.model.elementwise import BINARY, UNARY
from engine.model.op_specs import SPECS
from engine.reference import quantized, registry

MADE_BY_TRANSFORMS = {"DEPTHWISE_CONV_1X1", "LAYER_NORM"}  # never in a file
QUANT_OPS = set(quantized.QUANT_OPS)  # reference semantics in engine/reference/quantized


def test_every_op_with_a_kernel_has_a_table_entry():
    served = registry.supported_ops() | gpu_op_types() | quantized.supported("quantized")
    assert served - MADE_BY_TRANSFORMS <= set(SPECS), sorted(served - set(SPECS))


def test_every_gpu_op_has_a_reference_kernel_as_its_oracle():
    assert gpu_op_types() - QUANT_OPS <= registry.supported_ops()


def test_every_elementwise_entry_runs_on_the_reference_and_the_gpu():
    ops = set(UNARY) | set(BINARY)
    assert ops <= registry.supported_ops() and ops <= gpu_op_types()


def test_quantized_kinds_match_the_integer_kernels():
    integer = quantized.supported("quantized")
    assert {t for t, u in UNARY.items() if u.quantized} == integer & set(UNARY)


def test_moves_have_integer_kernels():
    assert {t for t, s in SPECS.items() if s.moves} <= quantized.supported("quantized")
