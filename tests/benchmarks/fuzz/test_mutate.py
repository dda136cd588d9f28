"""The mutator (benchmarks/fuzz/mutate.py) and, in process and GPU-free, the property the
fuzz run checks: any one field of a core model set to any value of its type imports and
compiles (compile_graph, no device) or raises ModelError, nothing else (Hypothesis picks
the field and value, and shrinks a failure to the smallest value that breaks)."""

from __future__ import annotations

import struct

import pytest
import tflite
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.fuzz.mutate import find_slots, mutant
from engine.errors import ModelError
from tests.helpers.files import model_file


@pytest.fixture(scope="module")
def detector() -> bytes:
    return model_file("face_detection_short_range").read_bytes()


def test_mutants_are_reproducible(detector):
    a = [mutant(detector, "m", 3, i) for i in range(20)]
    b = [mutant(detector, "m", 3, i) for i in range(20)]
    assert [m.data for m in a] == [m.data for m in b]
    assert all(m.data != detector for m in a)
    assert len({m.data for m in a}) == 20
    assert len({k for m in a for k in m.kinds}) >= 6  # structural and raw kinds both drawn


def test_slots_point_at_the_fields_they_name(detector):
    model = tflite.Model.GetRootAs(detector, 0)
    sub = model.Subgraphs(0)
    slots = find_slots(detector)
    dims = [s for s in slots if s.kind == "dim" and "signature" not in s.label]
    shape_values = [
        int(d) for i in range(sub.TensorsLength()) for d in sub.Tensors(i).ShapeAsNumpy()
    ]
    assert [struct.unpack_from(s.fmt, detector, s.pos)[0] for s in dims] == shape_values
    refs = [s for s in slots if s.kind == "tensor_ref" and s.label.startswith("op 0 ")]
    assert [struct.unpack_from("<i", detector, s.pos)[0] for s in refs] == [
        *sub.Operators(0).InputsAsNumpy(),
        *sub.Operators(0).OutputsAsNumpy(),
    ]
    strides = [s for s in slots if s.label.endswith("Conv2DOptions.StrideW")]
    assert strides and all(struct.unpack_from("<i", detector, s.pos)[0] in (1, 2) for s in strides)


def test_a_structural_mutation_changes_one_slot(detector):
    slots = {s.pos: s for s in find_slots(detector)}
    for i in range(200):
        m = mutant(detector, "m", 0, i)
        if len(m.kinds) != 1 or m.kinds[0] in (
            "swap_buffers",
            "byte_flip",
            "truncate",
            "zero_region",
            "swap_regions",
        ):
            continue  # fmt: skip
        changed = [p for p in range(len(detector)) if detector[p] != m.data[p]]
        assert changed, m.detail
        start = max(p for p in slots if p <= changed[0])
        assert changed[-1] < start + struct.calcsize(slots[start].fmt), m.detail


def _set(data: bytes, pos: int, fmt: str, value) -> bytes:
    buf = bytearray(data)
    struct.pack_into(fmt, buf, pos, value)
    return bytes(buf)


@st.composite
def one_field(draw, data: bytes):
    slots = find_slots(data)
    slot = draw(st.sampled_from(slots))
    if slot.fmt in ("<f", "<d"):
        value = draw(st.floats(width=32 if slot.fmt == "<f" else 64))
    else:
        bits = 8 * struct.calcsize(slot.fmt)
        lo, hi = (
            (0, 2**bits - 1) if slot.fmt[1].isupper() else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        )
        value = draw(st.integers(lo, hi))
    return slot, value


_DETECTOR = None


def _detector_bytes() -> bytes:
    global _DETECTOR
    if _DETECTOR is None:
        _DETECTOR = model_file("face_detection_short_range").read_bytes()
    return _DETECTOR


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_field_imports_and_compiles_or_raises_model_error(tmp_path_factory, data):
    from engine.gpu.compile import compile_graph
    from engine.model.importer import load_tflite

    original = _detector_bytes()
    slot, value = data.draw(one_field(original))
    path = tmp_path_factory.mktemp("field") / "mutant.tflite"
    path.write_bytes(_set(original, slot.pos, slot.fmt, value))
    try:
        compile_graph(load_tflite(path))
    except ModelError as exc:
        message = str(exc)
        assert str(path) in message and "\n" not in message, (slot.label, value, message)
