"""Write a graph IR back to a valid .tflite flatbuffer.

Used by tests to build single-op models over parameter grids (run on LiteRT
as the oracle) and by later tools that generate models.

Layout written:
- one subgraph; buffer 0 is the empty sentinel, each constant gets its own
  buffer, 16-byte aligned (TFLite kernels may read weights in place);
- one operator code per distinct (op type, custom) pair, version 1 (a MediaPipe custom
  op: the version the op table names);
- builtin options encoded from the IR attributes through the same schema
  reflection the importer uses; custom ops keep their raw options (the
  MediaPipe ops with options decoders are re-encoded from their attributes).
"""

from __future__ import annotations

import flatbuffers
import numpy as np
import tflite

from engine.model import schema
from engine.model.ir import Graph, Op, Tensor
from engine.model.op_specs import SPECS

_DEPRECATED_CODE_LIMIT = 127  # PLACEHOLDER_FOR_GREATER_OP_CODES in schema.fbs


def write_tflite(graph: Graph, description: str = "webgpu-ar") -> bytes:
    """Serialise `graph` as a TFLite flatbuffer."""
    b = flatbuffers.Builder(1024 + sum(t.nbytes for t in graph.tensors if t.is_constant))
    buffers = [_buffer(b, None)]
    tensor_offsets = []
    for t in graph.tensors:
        buffer_index = 0
        if t.is_constant:
            buffers.append(_buffer(b, t.data.astype(t.dtype, copy=False)))
            buffer_index = len(buffers) - 1
        tensor_offsets.append(_tensor(b, t, buffer_index))

    codes: list[tuple[str, bool]] = []
    op_offsets = []
    for op in graph.ops:
        key = (op.type, op.custom)
        if key not in codes:
            codes.append(key)
        op_offsets.append(_operator(b, op, codes.index(key)))
    code_offsets = [_operator_code(b, name, custom) for name, custom in codes]

    sub_name = b.CreateString("main")
    tensors_vec = _offset_vector(b, tflite.SubGraphStartTensorsVector, tensor_offsets)
    inputs_vec = _int32_vector(b, graph.inputs)
    outputs_vec = _int32_vector(b, graph.outputs)
    ops_vec = _offset_vector(b, tflite.SubGraphStartOperatorsVector, op_offsets)
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tensors_vec)
    tflite.SubGraphAddInputs(b, inputs_vec)
    tflite.SubGraphAddOutputs(b, outputs_vec)
    tflite.SubGraphAddOperators(b, ops_vec)
    tflite.SubGraphAddName(b, sub_name)
    subgraph = tflite.SubGraphEnd(b)

    desc = b.CreateString(description)
    codes_vec = _offset_vector(b, tflite.ModelStartOperatorCodesVector, code_offsets)
    subgraphs_vec = _offset_vector(b, tflite.ModelStartSubgraphsVector, [subgraph])
    buffers_vec = _offset_vector(b, tflite.ModelStartBuffersVector, buffers)
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, 3)
    tflite.ModelAddOperatorCodes(b, codes_vec)
    tflite.ModelAddSubgraphs(b, subgraphs_vec)
    tflite.ModelAddDescription(b, desc)
    tflite.ModelAddBuffers(b, buffers_vec)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _offset_vector(b: flatbuffers.Builder, start, offsets: list[int]) -> int:
    start(b, len(offsets))
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _int32_vector(b: flatbuffers.Builder, values) -> int:
    return b.CreateNumpyVector(np.asarray(values, dtype="<i4").reshape(-1))


def _buffer(b: flatbuffers.Builder, data: np.ndarray | None) -> int:
    data_vec = None
    if data is not None and data.size:
        payload = (
            np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"), copy=False).tobytes()
        )
        b.StartVector(1, len(payload), 16)
        b.head -= len(payload)
        b.Bytes[b.head : b.head + len(payload)] = payload
        data_vec = b.EndVector()
    tflite.BufferStart(b)
    if data_vec is not None:
        tflite.BufferAddData(b, data_vec)
    return tflite.BufferEnd(b)


def _tensor(b: flatbuffers.Builder, t: Tensor, buffer_index: int) -> int:
    name = b.CreateString(t.name)
    shape = _int32_vector(b, t.shape)
    signature = _int32_vector(b, t.signature) if t.signature is not None else None
    quant = _quantization(b, t) if t.quantization else None
    tflite.TensorStart(b)
    tflite.TensorAddShape(b, shape)
    if signature is not None:
        tflite.TensorAddShapeSignature(b, signature)
    tflite.TensorAddType(b, schema.TENSOR_TYPES[t.dtype])
    tflite.TensorAddBuffer(b, buffer_index)
    tflite.TensorAddName(b, name)
    if quant is not None:
        tflite.TensorAddQuantization(b, quant)
    return tflite.TensorEnd(b)


def _quantization(b: flatbuffers.Builder, t: Tensor) -> int:
    q = t.quantization
    scale = b.CreateNumpyVector(np.asarray(q.scale, dtype="<f4"))
    zero = b.CreateNumpyVector(np.asarray(q.zero_point, dtype="<i8"))
    tflite.QuantizationParametersStart(b)
    tflite.QuantizationParametersAddScale(b, scale)
    tflite.QuantizationParametersAddZeroPoint(b, zero)
    tflite.QuantizationParametersAddQuantizedDimension(b, q.axis)
    return tflite.QuantizationParametersEnd(b)


def _operator_code(b: flatbuffers.Builder, name: str, custom: bool) -> int:
    custom_name = b.CreateString(name) if custom else None
    code = schema.OP_CODES["CUSTOM"] if custom else schema.OP_CODES[name]
    tflite.OperatorCodeStart(b)
    tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, _DEPRECATED_CODE_LIMIT))
    tflite.OperatorCodeAddBuiltinCode(b, code)
    if custom_name is not None:
        tflite.OperatorCodeAddCustomCode(b, custom_name)
    spec = SPECS.get(name) if custom else None
    tflite.OperatorCodeAddVersion(b, spec.version if spec and spec.version else 1)
    return tflite.OperatorCodeEnd(b)


def _operator(b: flatbuffers.Builder, op: Op, code_index: int) -> int:
    inputs = _int32_vector(b, op.inputs)
    outputs = _int32_vector(b, op.outputs)
    options_type, options = 0, None
    custom_vec = None
    if op.custom:
        encoder = schema.CUSTOM_ENCODERS.get(op.type)
        raw = encoder(op.attrs) if encoder and op.attrs else op.custom_options
        if raw:
            custom_vec = b.CreateNumpyVector(np.frombuffer(raw, dtype=np.uint8))
    else:
        table = schema.options_table_for(op.type)
        if table is None and op.attrs:
            raise ValueError(
                f"op {op.type}: attributes {sorted(op.attrs)} but no known options table"
            )
        if table is not None:
            options_type, options = schema.OPTION_CODES[table], _options(b, table, op.attrs)
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, code_index)
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(b, options_type)
        tflite.OperatorAddBuiltinOptions(b, options)
    if custom_vec is not None:
        tflite.OperatorAddCustomOptions(b, custom_vec)
    return tflite.OperatorEnd(b)


def _options(b: flatbuffers.Builder, table: str, attrs: dict) -> int:
    fields = schema.option_fields(table)
    unknown = set(attrs) - set(fields)
    if unknown:
        raise ValueError(f"{table} has no fields {sorted(unknown)}")
    vectors = {k: _int32_vector(b, v) for k, v in attrs.items() if fields[k][1]}
    getattr(tflite, f"{table}Start")(b)
    for key, value in attrs.items():
        camel, is_vector = fields[key]
        value = vectors[key] if is_vector else schema.encode_enum(key, value)
        getattr(tflite, f"{table}Add{camel}")(b, value)
    return getattr(tflite, f"{table}End")(b)
