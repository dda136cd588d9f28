"""Read a .tflite flatbuffer into the graph IR.

Inputs: a path (or the file's bytes). Output: an `engine.model.Graph` of the
first subgraph, ops in the file's execution order.

Steps:
1. check the bytes are a TFLite flatbuffer (non-empty, "TFL3" identifier);
2. read tensors (shape, dtype, quantization, constant data; sparse constants
   are densified): integer types stay integer; quantization is per tensor or per
   channel (scale, zero point, quantized dimension);
3. read ops: builtin code or custom code, options decoded to typed attributes (a
   MediaPipe custom op of a version the engine does not implement is a ModelError);
4. check the tensors: a type (INT4, STRING, ...) or a quantization (custom details,
   inconsistent per-channel parameters) the engine cannot hold is a ModelError naming
   the file, the tensor and the first op that reads or writes it;
5. validate the graph against the schema and the op table (engine/model/validate.py:
   indices, arity, types, ranks, options, shapes), before anything computes on it;
6. fold DEQUANTIZE / DENSIFY of constants into dense float32 constants and
   drop tensors nothing uses any more.
Any failure becomes `ModelError` naming the file and the problem.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import flatbuffers
import numpy as np
import tflite

from engine.catalog.manifest import differs_from_published
from engine.errors import ModelError, PublishedModelWarning
from engine.model import schema
from engine.model.ir import Graph, Op, Quantization, Tensor, compact
from engine.model.op_specs import SPECS
from engine.model.sparse import densify
from engine.model.validate import validate


def load_tflite(source: str | os.PathLike | bytes) -> Graph:
    """Import a .tflite model (path or bytes) into the graph IR."""
    if isinstance(source, bytes | bytearray):
        name, data = "<bytes>", bytes(source)
    else:
        name = str(source)
        try:
            data = Path(source).read_bytes()
        except FileNotFoundError:
            raise ModelError(f"{name}: no such file") from None
        except OSError as exc:
            raise ModelError(f"{name}: cannot read: {exc.strerror or exc}") from None
        _warn_if_altered(name, data)
    _check_header(name, data)
    try:
        graph = _read_graph(name, data)
    except ModelError:
        raise
    except Exception as exc:  # a corrupt flatbuffer fails in many ways deep in the accessors
        raise ModelError(
            f"{name}: corrupt or truncated TFLite file ({type(exc).__name__}: {exc})"
        ) from None
    try:
        return _fold_constants(graph)
    except ModelError:
        raise
    except Exception as exc:  # validate() covers what is known; anything else is still a bad file
        raise ModelError(
            f"{name}: cannot fold the file's constants ({type(exc).__name__}: {exc})"
        ) from None


_WARNED: set[tuple[str, int]] = set()  # (file, size) already warned about in this process


def _warn_if_altered(name: str, data: bytes) -> None:
    """A file named like a published model (the manifest) but with other bytes: warn once
    per file (PublishedModelWarning, one line). Altered weights still import and run, with
    outputs that may be off; the warning is the only sign of it."""
    key = (os.path.abspath(name), len(data))
    if key in _WARNED:
        return
    why = differs_from_published(name, data)
    if why:
        _WARNED.add(key)
        warnings.warn(why, PublishedModelWarning, stacklevel=3)


def _check_header(name: str, data: bytes) -> None:
    if not data:
        raise ModelError(f"{name}: empty file, expected a TFLite flatbuffer")
    if len(data) < 8:
        raise ModelError(f"{name}: file is {len(data)} bytes, too short for a TFLite flatbuffer")
    if not flatbuffers.util.BufferHasIdentifier(data, 0, b"TFL3"):
        raise ModelError(f"{name}: not a TFLite model (no 'TFL3' flatbuffer identifier)")
    root = int.from_bytes(data[:4], "little")
    if root + 4 > len(data):
        raise ModelError(
            f"{name}: truncated TFLite file (root table at {root} past end {len(data)})"
        )


def _read_graph(name: str, data: bytes) -> Graph:
    model = tflite.Model.GetRootAs(data, 0)
    if model.SubgraphsLength() < 1:
        raise ModelError(f"{name}: model has no subgraph")
    sub = model.Subgraphs(0)
    buffers = [_buffer_bytes(name, data, model.Buffers(i)) for i in range(model.BuffersLength())]
    read = [_read_tensor(name, sub.Tensors(i), buffers) for i in range(sub.TensorsLength())]
    codes = [_op_code(model.OperatorCodes(i)) for i in range(model.OperatorCodesLength())]
    ops = [_read_op(name, i, sub.Operators(i), codes) for i in range(sub.OperatorsLength())]
    inputs = [int(v) for v in sub.InputsAsNumpy()] if sub.InputsLength() else []
    outputs = [int(v) for v in sub.OutputsAsNumpy()] if sub.OutputsLength() else []
    graph = Graph([t for t, _ in read], ops, inputs, outputs, name=name)
    _check_tensors(graph, {i: why for i, (_, why) in enumerate(read) if why})
    validate(graph)
    return graph


def _buffer_bytes(name: str, data: bytes, buf) -> bytes:
    offset = buf.Offset()
    if offset > 1:  # large models keep buffer data after the flatbuffer
        size = buf.Size()
        if offset + size > len(data):
            raise ModelError(f"{name}: truncated TFLite file (buffer data past end of file)")
        return data[offset : offset + size]
    if buf.DataIsNone():
        return b""
    return buf.DataAsNumpy().tobytes()


def _read_tensor(name: str, t, buffers: list[bytes]) -> tuple[Tensor, str]:
    """The tensor, and why the engine cannot hold it ("" when it can)."""
    tname = t.Name().decode("utf-8", "replace") if t.Name() else ""
    ttype = t.Type()
    shape = tuple(int(v) for v in t.ShapeAsNumpy()) if t.ShapeLength() else ()
    if ttype not in schema.TENSOR_DTYPES:
        kind = schema.TENSOR_TYPE_NAMES.get(ttype, str(ttype))
        return Tensor(tname, shape, "float32"), f"has unsupported type {kind}"
    dtype = schema.TENSOR_DTYPES[ttype]
    signature = None
    if t.ShapeSignatureLength():
        signature = tuple(int(v) for v in t.ShapeSignatureAsNumpy())
    if t.Buffer() >= len(buffers):
        raise ModelError(f"{name}: tensor '{tname}' refers to missing buffer {t.Buffer()}")
    raw = buffers[t.Buffer()]
    data = None
    if raw:
        values = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype)
        sparsity = t.Sparsity()
        if sparsity is not None:
            data = densify(values, shape, sparsity)
        elif values.size != int(np.prod(shape, dtype=np.int64)):
            raise ModelError(
                f"{name}: tensor '{tname}' holds {values.size} values, its shape {shape} needs "
                f"{int(np.prod(shape))}"
            )
        else:
            data = values.reshape(shape)
    quant, why = _read_quantization(t.Quantization(), shape)
    return Tensor(tname, shape, dtype, data, quant, signature), why


def _read_quantization(q, shape: tuple[int, ...]) -> tuple[Quantization | None, str]:
    """Affine quantization (per tensor, or per channel along the quantized dimension),
    and why the engine cannot use it ("" when it can). Min/max without a scale (a
    converter's calibration record) is no quantization."""
    if q is None:
        return None, ""
    if q.DetailsType() != 0:
        return None, f"has custom quantization details (type {q.DetailsType()})"
    if q.ScaleLength() == 0:
        return None, ""
    scale = tuple(float(v) for v in q.ScaleAsNumpy())
    zero = tuple(int(v) for v in q.ZeroPointAsNumpy()) if q.ZeroPointLength() else (0,) * len(scale)
    axis = int(q.QuantizedDimension())
    quant = Quantization(scale, zero, axis)
    if len(zero) != len(scale):
        return quant, f"has {len(scale)} quantization scales but {len(zero)} zero points"
    if not all(np.isfinite(v) and v > 0 for v in scale):
        return quant, f"has a quantization scale that is not a positive number ({scale[:4]})"
    if len(scale) > 1 and not (0 <= axis < len(shape) and shape[axis] == len(scale)):
        return quant, (
            f"has {len(scale)} per-channel scales along dimension {axis} of shape {shape}"
        )
    return quant, ""


def _op_code(code) -> tuple[str, bool, int]:
    """(op type, custom, the operator code's version)."""
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    if builtin == schema.OP_CODES["CUSTOM"]:
        return code.CustomCode().decode("utf-8", "replace"), True, code.Version()
    return schema.OP_NAMES.get(builtin, f"BUILTIN_{builtin}"), False, code.Version()


def _read_op(name: str, index: int, op, codes: list[tuple[str, bool, int]]) -> Op:
    if op.OpcodeIndex() >= len(codes):
        raise ModelError(f"{name}: op #{index} refers to missing operator code {op.OpcodeIndex()}")
    op_type, custom, version = codes[op.OpcodeIndex()]
    spec = SPECS.get(op_type)
    if custom and spec is not None and spec.version not in (None, version):
        raise ModelError(
            f"{name}: op #{index} {op_type} is version {version}; the engine implements "
            f"version {spec.version} only (another version is another op)"
        )
    inputs = tuple(int(v) for v in op.InputsAsNumpy()) if op.InputsLength() else ()
    outputs = tuple(int(v) for v in op.OutputsAsNumpy()) if op.OutputsLength() else ()
    attrs: dict = {}
    custom_options = b""
    if custom:
        custom_options = op.CustomOptionsAsNumpy().tobytes() if op.CustomOptionsLength() else b""
        decoder = schema.CUSTOM_DECODERS.get(op_type)
        if decoder:
            try:
                attrs = decoder(custom_options)
            except ValueError as exc:
                raise ModelError(f"{name}: op #{index} {op_type}: {exc}") from None
    else:
        table_name = schema.OPTION_NAMES.get(op.BuiltinOptionsType(), "NONE")
        if table_name != "NONE" and op.BuiltinOptions() is not None:
            attrs = schema.decode_options(table_name, op.BuiltinOptions())
    return Op(op_type, inputs, outputs, attrs, custom, custom_options)


def _check_tensors(graph: Graph, problems: dict[int, str]) -> None:
    """ModelError for the first tensor the engine cannot hold, naming who uses it."""
    for t, why in problems.items():
        tensor = graph.tensors[t]
        for i, op in enumerate(graph.ops):
            if t in op.inputs or t in op.outputs:
                raise ModelError(
                    f"{graph.name}: op #{i} {op.type}: tensor '{tensor.name}' {why}; "
                    "the engine cannot run it"
                )
        if t in graph.inputs or t in graph.outputs:
            raise ModelError(f"{graph.name}: graph input/output '{tensor.name}' {why}")


def _dequantize(t: Tensor) -> np.ndarray:
    """Constant fp16/int8/uint8 data -> float32."""
    if t.dtype == "float16" or t.quantization is None:
        return t.data.astype(np.float32)
    q = t.quantization
    shape = [1] * t.data.ndim
    if len(q.scale) > 1:
        shape[q.axis] = len(q.scale)
    scale = np.asarray(q.scale, np.float32).reshape(shape)
    zero = np.asarray(q.zero_point, np.float32).reshape(shape)
    return ((t.data.astype(np.float32) - zero) * scale).astype(np.float32)


def _fold_constants(graph: Graph) -> Graph:
    """Fold DEQUANTIZE/DENSIFY of constants into the consumers' constants."""
    tensors = list(graph.tensors)
    kept: list[Op] = []
    for op in graph.ops:
        source = tensors[op.inputs[0]] if op.inputs else None
        if op.type in ("DEQUANTIZE", "DENSIFY") and source is not None and source.is_constant:
            out = tensors[op.outputs[0]]
            data = _dequantize(source) if op.type == "DEQUANTIZE" else source.data
            tensors[op.outputs[0]] = Tensor(
                out.name, out.shape, str(data.dtype), data.reshape(out.shape), out.quantization
            )  # constants have no dynamic dimension: signature dropped
            continue
        kept.append(op)
    return compact(Graph(tensors, kept, list(graph.inputs), list(graph.outputs), graph.name))
