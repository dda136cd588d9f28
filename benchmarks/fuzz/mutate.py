"""Seeded mutations of a .tflite file: what a corrupt download, a bad converter or a hostile
file does to a model.

Two families:
- structural (flatbuffer-aware): the file is walked with the `tflite` reader and every
  scalar slot that is present in the bytes is listed with what it means (a tensor's shape
  dimension, type or buffer index; an op's input/output/opcode index, options type or an
  option field; an operator code's builtin code; a graph input/output). A mutation writes
  a new value into one slot in place (same layout, everything else intact), or swaps two
  tensors' buffer indices; values are the ones that break code: 0, -1, off-by-one,
  out of range, huge, random;
- raw: byte flips, a truncation, a zeroed region, two regions swapped.

`mutant(data, name, seed, index)` is a pure function of its arguments: a failing mutant is
reproduced from (model, seed, index) alone (`python -m benchmarks.fuzz --replay`).
"""

from __future__ import annotations

import inspect
import random
import re
import struct
from dataclasses import dataclass
from functools import cache

import tflite

from engine.model import schema

# struct formats of the flatbuffer scalar types the generated accessors read
_FORMATS = {"Int8": "<b", "Uint8": "<B", "Bool": "<B", "Int16": "<h", "Uint16": "<H",
            "Int32": "<i", "Uint32": "<I", "Int64": "<q", "Uint64": "<Q", "Float32": "<f",
            "Float64": "<d"}  # fmt: skip
_ACCESSOR = re.compile(r"Offset\((\d+)\).*?number_types\.(\w+)Flags, o \+ self\._tab\.Pos", re.S)
# Share of structural mutations (the rest are raw): raw byte damage lands mostly in weight
# data (97% of a core model's bytes), which only changes numbers; structure is where the
# importer and compiler can be hurt.
STRUCTURAL_SHARE = 0.7
STACK_SHARE = 0.15  # mutants with 2-3 mutations applied on top of each other


@dataclass(frozen=True)
class Slot:
    """A scalar field present in the file: its byte position, struct format and meaning."""

    pos: int
    fmt: str
    kind: str  # dim | type | buffer | tensor_ref | opcode_index | options_type | option | ...
    label: str  # e.g. "tensor 12 'conv1' shape[1]"
    bound: int = 0  # the count the value indexes into (tensors, buffers, codes), if any


@dataclass(frozen=True)
class Mutant:
    model: str
    seed: int
    index: int
    kinds: tuple[str, ...]
    detail: str  # what changed, for the report
    data: bytes


@cache
def _table_scalars(cls_name: str) -> tuple[tuple[str, int, str], ...]:
    """(field, vtable offset, struct format) of every scalar field of a generated table."""
    cls = getattr(tflite, cls_name)
    out = []
    for name, fn in vars(cls).items():
        if name.startswith(("_", "GetRootAs", "Init")) or not callable(fn):
            continue
        try:
            m = _ACCESSOR.search(inspect.getsource(fn))
        except (OSError, TypeError):
            continue
        if m and m.group(2) in _FORMATS and "j * " not in inspect.getsource(fn):
            out.append((name, int(m.group(1)), _FORMATS[m.group(2)]))
    return tuple(out)


def _field_pos(tab, vt: int) -> int | None:
    o = tab.Offset(vt)
    return tab.Pos + o if o else None


def _vector(tab, vt: int, width: int) -> list[int]:
    """Byte positions of a vector field's elements (empty when absent)."""
    o = tab.Offset(vt)
    if not o:
        return []
    start, n = tab.Vector(o), tab.VectorLen(o)
    if start + width * n > len(tab.Bytes):  # a corrupt length (after a raw mutation)
        raise ValueError(f"vector of {n} past the end of the file")
    return [start + width * j for j in range(n)]


def find_slots(data: bytes) -> list[Slot]:
    """Every mutable scalar slot of the first subgraph (see the module docstring)."""
    model = tflite.Model.GetRootAs(data, 0)
    sub = model.Subgraphs(0)
    n_tensors, n_buffers, n_codes = sub.TensorsLength(), model.BuffersLength(), 0
    n_codes = model.OperatorCodesLength()
    slots: list[Slot] = []
    for i in range(n_tensors):
        t = sub.Tensors(i)
        tab, name = t._tab, (t.Name() or b"").decode("utf-8", "replace")
        for d, pos in enumerate(_vector(tab, 4, 4)):
            slots.append(Slot(pos, "<i", "dim", f"tensor {i} '{name}' shape[{d}]"))
        for d, pos in enumerate(_vector(tab, 18, 4)):
            slots.append(Slot(pos, "<i", "dim", f"tensor {i} '{name}' shape_signature[{d}]"))
        if (pos := _field_pos(tab, 6)) is not None:
            slots.append(Slot(pos, "<b", "type", f"tensor {i} '{name}' type"))
        if (pos := _field_pos(tab, 8)) is not None:
            slots.append(Slot(pos, "<I", "buffer", f"tensor {i} '{name}' buffer", n_buffers))
    for i in range(sub.OperatorsLength()):
        op = sub.Operators(i)
        tab = op._tab
        if (pos := _field_pos(tab, 4)) is not None:
            slots.append(Slot(pos, "<I", "opcode_index", f"op {i} opcode_index", n_codes))
        for vt, what in ((6, "inputs"), (8, "outputs")):
            for j, pos in enumerate(_vector(tab, vt, 4)):
                slots.append(Slot(pos, "<i", "tensor_ref", f"op {i} {what}[{j}]", n_tensors))
        if (pos := _field_pos(tab, 10)) is not None:
            slots.append(Slot(pos, "<B", "options_type", f"op {i} builtin_options_type"))
            slots.extend(_option_slots(op, i))
        for j, pos in enumerate(_vector(tab, 14, 1)):
            slots.append(Slot(pos, "<B", "custom_byte", f"op {i} custom_options[{j}]"))
    for i in range(n_codes):
        tab = model.OperatorCodes(i)._tab
        if (pos := _field_pos(tab, 4)) is not None:
            slots.append(Slot(pos, "<b", "builtin_code", f"operator code {i} deprecated_builtin"))
        if (pos := _field_pos(tab, 10)) is not None:
            slots.append(Slot(pos, "<i", "builtin_code", f"operator code {i} builtin_code"))
    for vt, what in ((6, "inputs"), (8, "outputs")):
        for j, pos in enumerate(_vector(sub._tab, vt, 4)):
            slots.append(Slot(pos, "<i", "tensor_ref", f"subgraph {what}[{j}]", n_tensors))
    return slots


def _option_slots(op, index: int) -> list[Slot]:
    table_name = schema.OPTION_NAMES.get(op.BuiltinOptionsType(), "NONE")
    table = op.BuiltinOptions()
    if table_name == "NONE" or table is None or not hasattr(tflite, table_name):
        return []
    slots = []
    for field, vt, fmt in _table_scalars(table_name):
        o = table.Offset(vt)
        if o:
            slots.append(Slot(table.Pos + o, fmt, "option", f"op {index} {table_name}.{field}"))
    return slots


def _values(slot: Slot, old: int | float, rng: random.Random) -> int | float:
    """A value that breaks code for this kind of slot."""
    if slot.fmt in ("<f", "<d"):
        return rng.choice([0.0, -1.0, 1e30, -1e30, float("nan"), float("inf"), old * 2, 1e-30])
    if slot.kind == "dim":
        choices = [0, -1, -2, 1, 2, 3, old - 1, old + 1, old * 2, old * 16, 1 << 16, 1 << 20,
                   2**31 - 1, -(2**31), rng.randint(0, 4096)]  # fmt: skip
    elif slot.bound:  # an index into tensors, buffers or operator codes
        n = slot.bound
        choices = [-1, -2, n, n + 1, 2**31 - 1, rng.randrange(n), rng.randrange(n), 0]
    elif slot.kind == "type":
        choices = [rng.randint(0, 20)]
    elif slot.kind == "builtin_code":
        choices = [rng.choice(list(schema.OP_NAMES)), rng.randint(-128, 300), 0, 32]
    elif slot.kind == "options_type":
        choices = [rng.choice(list(schema.OPTION_NAMES)), rng.randint(0, 255), 0]
    else:  # option fields, custom option bytes
        choices = [0, -1, 1, 2, 3, 7, 100, 127, -128, 255, 65535, 2**31 - 1,
                   rng.randint(-(2**15), 2**15), old + 1, old - 1]  # fmt: skip
    return rng.choice(choices)


def _clip(fmt: str, value: int | float) -> int | float:
    if fmt in ("<f", "<d"):
        return value
    bits = 8 * struct.calcsize(fmt)
    lo, hi = (
        (0, 2**bits - 1)
        if fmt[1].isupper() or fmt == "<B"
        else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    return int(min(max(int(value), lo), hi))


def _set_slot(buf: bytearray, slot: Slot, rng: random.Random) -> str:
    (old,) = struct.unpack_from(slot.fmt, buf, slot.pos)
    new = old
    for _ in range(8):  # a value that differs (a few slots have one possible value)
        new = _clip(slot.fmt, _values(slot, old, rng))
        if new != old:  # NaN differs from everything
            break
    struct.pack_into(slot.fmt, buf, slot.pos, new)
    return f"{slot.label}: {old} -> {new}"


def _swap_buffers(buf: bytearray, slots: list[Slot], rng: random.Random) -> str:
    buffers = [s for s in slots if s.kind == "buffer"]
    a, b = rng.sample(buffers, 2)
    (va,), (vb,) = struct.unpack_from("<I", buf, a.pos), struct.unpack_from("<I", buf, b.pos)
    struct.pack_into("<I", buf, a.pos, vb)
    struct.pack_into("<I", buf, b.pos, va)
    return f"swapped buffers of {a.label.removesuffix(' buffer')} and {b.label.removesuffix(' buffer')}"


def _structural(buf: bytearray, slots: list[Slot], rng: random.Random) -> tuple[str, str]:
    kinds = sorted({s.kind for s in slots})
    if sum(s.kind == "buffer" for s in slots) >= 2:
        kinds.append("swap_buffers")
    kind = rng.choice(kinds)  # each kind equally likely, however many slots it has
    if kind == "swap_buffers":
        return kind, _swap_buffers(buf, slots, rng)
    return kind, _set_slot(buf, rng.choice([s for s in slots if s.kind == kind]), rng)


def _raw(buf: bytearray, rng: random.Random) -> tuple[str, str]:
    n = len(buf)
    kind = rng.choice(["byte_flip", "truncate", "zero_region", "swap_regions"])
    if kind == "byte_flip":
        where = sorted(rng.randrange(n) for _ in range(rng.choice([1, 1, 2, 4, 16])))
        for p in where:
            buf[p] ^= rng.randint(1, 255)
        return kind, f"flipped bytes at {where[:4]}{'...' if len(where) > 4 else ''}"
    if kind == "truncate":
        keep = rng.randrange(n)
        del buf[keep:]
        return kind, f"truncated to {keep} of {n} bytes"
    length = min(n // 4, 1 << rng.randint(0, 16))
    a = rng.randrange(n - length)
    if kind == "zero_region":
        buf[a : a + length] = bytes(length)
        return kind, f"zeroed {length} bytes at {a}"
    b = rng.randrange(n - length)
    buf[a : a + length], buf[b : b + length] = buf[b : b + length], buf[a : a + length]
    return kind, f"swapped {length} bytes at {a} and {b}"


def mutant(data: bytes, model: str, seed: int, index: int) -> Mutant:
    """Mutant number `index` of `data` for `seed` (deterministic)."""
    rng = random.Random(f"{seed}:{model}:{index}")
    buf = bytearray(data)
    kinds, details = [], []
    for _ in range(rng.choice([2, 3]) if rng.random() < STACK_SHARE else 1):
        if rng.random() < STRUCTURAL_SHARE:
            try:  # an earlier raw mutation may have broken the structure: then stay raw
                kind, detail = _structural(buf, find_slots(bytes(buf)), rng)
            except Exception:
                kind = ""
            if kind:
                kinds.append(kind)
                details.append(detail)
                continue
        kind, detail = _raw(buf, rng)
        kinds.append(kind)
        details.append(detail)
    return Mutant(model, seed, index, tuple(kinds), "; ".join(details), bytes(buf))
