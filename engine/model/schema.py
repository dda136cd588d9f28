"""The TFLite schema as the importer and writer see it, through the `tflite` package.

- op names <-> BuiltinOperator codes;
- tensor types <-> numpy dtypes;
- builtin options: the fields of each option table, found by reflection on the
  generated classes, so import and export cover every builtin op the same way;
- enum-valued fields, stored in the IR by name ("SAME", "RELU6").
"""

from __future__ import annotations

import inspect
import re
import struct
from functools import cache

import numpy as np
import tflite
from flatbuffers import flexbuffers
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.Padding import Padding
from tflite.TensorType import TensorType


def _enum_names(enum_cls: type) -> dict[int, str]:
    return {v: k for k, v in vars(enum_cls).items() if not k.startswith("_") and isinstance(v, int)}


OP_NAMES: dict[int, str] = _enum_names(BuiltinOperator)
OP_CODES: dict[str, int] = {v: k for k, v in OP_NAMES.items()}
OPTION_NAMES: dict[int, str] = _enum_names(BuiltinOptions)
OPTION_CODES: dict[str, int] = {v: k for k, v in OPTION_NAMES.items()}

# TensorType -> numpy dtype name; types the engine can hold as numpy arrays.
TENSOR_DTYPES: dict[int, str] = {
    TensorType.FLOAT32: "float32",
    TensorType.FLOAT16: "float16",
    TensorType.FLOAT64: "float64",
    TensorType.INT32: "int32",
    TensorType.INT64: "int64",
    TensorType.INT16: "int16",
    TensorType.INT8: "int8",
    TensorType.UINT8: "uint8",
    TensorType.UINT16: "uint16",
    TensorType.UINT32: "uint32",
    TensorType.UINT64: "uint64",
    TensorType.BOOL: "bool",
}
TENSOR_TYPES: dict[str, int] = {v: k for k, v in TENSOR_DTYPES.items()}
TENSOR_TYPE_NAMES: dict[int, str] = _enum_names(TensorType)

# Option fields whose integer values are enums; the IR keeps the enum's name.
ENUM_FIELDS: dict[str, dict[int, str]] = {
    "padding": _enum_names(Padding),
    "fused_activation_function": _enum_names(ActivationFunctionType),
}

# Which options table each builtin op uses (the ones whose names do not follow
# "<Op>Options"). Used by the writer when an IR op was built by hand.
_OPTIONS_FOR_OP: dict[str, str] = {
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "ADD": "AddOptions",
    "SUB": "SubOptions",
    "MUL": "MulOptions",
    "DIV": "DivOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions",
    "CONCATENATION": "ConcatenationOptions",
    "RESHAPE": "ReshapeOptions",
    "SPLIT": "SplitOptions",
    "SPLIT_V": "SplitVOptions",
    "SLICE": "SliceOptions",
    "STRIDED_SLICE": "StridedSliceOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "SOFTMAX": "SoftmaxOptions",
    "TRANSPOSE": "TransposeOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "PAD": "PadOptions",
    "PADV2": "PadV2Options",
    "LEAKY_RELU": "LeakyReluOptions",
    "HARD_SWISH": "HardSwishOptions",
    "DEQUANTIZE": "DequantizeOptions",
    "DENSIFY": "DensifyOptions",
    "SQUEEZE": "SqueezeOptions",
    "GATHER": "GatherOptions",
    "GELU": "GeluOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "PACK": "PackOptions",
    "SHAPE": "ShapeOptions",
    "TILE": "TileOptions",
    "EXPAND_DIMS": "ExpandDimsOptions",
    "NEG": "NegOptions",
    "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
}


def options_table_for(op_type: str) -> str | None:
    """Name of the builtin options table an op type carries, if any."""
    return _OPTIONS_FOR_OP.get(op_type)


def snake(name: str) -> str:
    """'DilationWFactor' -> 'dilation_w_factor'."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@cache
def option_fields(table: str) -> dict[str, tuple[str, bool]]:
    """Fields of an options table: snake name -> (CamelName, is_vector)."""
    cls = getattr(tflite, table)
    fields: dict[str, tuple[str, bool]] = {}
    for name, fn in vars(cls).items():
        if name.startswith(("GetRootAs", "Init", "_")) or not callable(fn):
            continue
        if name.endswith(("AsNumpy", "Length", "IsNone", "BufferHasIdentifier")):
            continue
        params = list(inspect.signature(fn).parameters)
        is_vector = hasattr(cls, name + "AsNumpy")
        if params == ["self"] or (is_vector and params == ["self", "j"]):
            fields[snake(name)] = (name, is_vector)
    return fields


def decode_options(table_name: str, table: object) -> dict:
    """Read every field of a builtin options table into IR attributes."""
    cls = getattr(tflite, table_name)
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    attrs: dict = {}
    for key, (camel, is_vector) in option_fields(table_name).items():
        if is_vector:
            if not getattr(obj, camel + "IsNone")():
                attrs[key] = tuple(int(v) for v in getattr(obj, camel + "AsNumpy")())
            continue
        value = getattr(obj, camel)()
        if key in ENUM_FIELDS:
            value = ENUM_FIELDS[key].get(value, value)
        elif isinstance(value, float):
            value = float(np.float32(value))
        attrs[key] = value
    return attrs


def encode_enum(key: str, value: object) -> object:
    if key in ENUM_FIELDS and isinstance(value, str):
        codes = {v: k for k, v in ENUM_FIELDS[key].items()}
        return codes[value]
    return value


# --- MediaPipe's Convolution2DTransposeBias custom options -------------------
# A raw little-endian TfLiteTransposeConvParams: {padding, stride_w, stride_h},
# with TfLitePadding 1 = SAME, 2 = VALID (mediapipe/util/tflite/operations).
_TFLITE_PADDING = {1: "SAME", 2: "VALID"}


def decode_transpose_conv_bias(options: bytes) -> dict:
    if len(options) < 12:
        raise ValueError(f"Convolution2DTransposeBias options are {len(options)} bytes, need 12")
    padding, stride_w, stride_h = struct.unpack_from("<iii", options)
    if padding not in _TFLITE_PADDING:
        raise ValueError(f"Convolution2DTransposeBias padding code {padding} is not 1 or 2")
    return {"padding": _TFLITE_PADDING[padding], "stride_w": stride_w, "stride_h": stride_h}


def encode_transpose_conv_bias(attrs: dict) -> bytes:
    code = {v: k for k, v in _TFLITE_PADDING.items()}[attrs["padding"]]
    return struct.pack("<iii", code, attrs["stride_w"], attrs["stride_h"])


# --- MediaPipe's landmark ops: options in a flexbuffer map --------------------------
# Read as TFLite's GPU delegate parsers read them (tensorflow/lite/delegates/gpu/common/
# mediapipe/*.cc, Parse...V2Attributes): the keys each op's kernels use, ints and floats
# (float32) by name, subset_idxs a typed vector of ints kept flat (the parser pairs it up; the
# kernels use every member, an odd last one twice). TransformLandmarks V2 has no options.
_FLEX_FIELDS = {
    "Landmarks2TransformMatrix": {
        "left_rotation_idx": int, "right_rotation_idx": int, "subset_idxs": tuple,
        "output_height": int, "output_width": int, "scale_x": float, "scale_y": float,
        "target_rotation_radians": float,
    },
    "TransformTensorBilinear": {"output_height": int, "output_width": int},
    "TransformLandmarks": {},
}  # fmt: skip


def _flex_decoder(op_type: str):
    fields = _FLEX_FIELDS[op_type]

    def decode(options: bytes) -> dict:
        if not fields:
            return {}
        root = flexbuffers.GetRoot(options) if options else None
        if root is None or not root.IsMap:
            raise ValueError(f"{op_type} options are not a flexbuffer map")
        values = root.AsMap
        attrs: dict = {}
        for key, kind in fields.items():
            try:
                ref = values[key]
            except KeyError:
                continue  # validate names what is missing (the op table's options)
            vector = ref.AsTypedVector.Value if ref.IsTypedVector else None
            if kind is tuple and vector is not None and all(type(v) is int for v in vector):
                attrs[key] = tuple(vector)
            elif kind is int and ref.IsInt:
                attrs[key] = int(ref.AsInt)
            elif kind is float and ref.IsNumeric:
                attrs[key] = float(np.float32(ref.AsFloat if ref.IsFloat else ref.AsInt))
            else:
                raise ValueError(f"{op_type} option {key} is not {kind.__name__}")
        return attrs

    return decode


def _flex_encoder(op_type: str):
    fields = _FLEX_FIELDS[op_type]

    def encode(attrs: dict) -> bytes:
        if not fields:
            return b""
        fbb = flexbuffers.Builder()
        with fbb.Map():
            for key, kind in fields.items():
                if key not in attrs:
                    continue
                if kind is tuple:
                    fbb.TypedVectorFromElements(key, [int(v) for v in attrs[key]])
                elif kind is int:
                    fbb.Int(key, int(attrs[key]))
                else:
                    fbb.Float(key, float(attrs[key]))
        return bytes(fbb.Finish())

    return encode


CUSTOM_DECODERS = {
    "Convolution2DTransposeBias": decode_transpose_conv_bias,
    **{t: _flex_decoder(t) for t in _FLEX_FIELDS},
}
CUSTOM_ENCODERS = {
    "Convolution2DTransposeBias": encode_transpose_conv_bias,
    **{t: _flex_encoder(t) for t in _FLEX_FIELDS},
}
