"""What each op type may look like in a file: the table engine/model/validate.py checks.

Per op type (TFLite's builtin names, MediaPipe's custom codes) one `OpSpec`:
- arity: how many inputs and outputs, and which inputs may be left out (-1);
- the type class of each input position: "f" float only, "x" activations (float or quantized), "w"
  weights (float, int8/uint8), "b" bias (float or int32/int64), "i" indices and shapes
  (int32/int64), "any";
- ranks each input position must have (where the kernels index them by rank);
- options: the attribute names the kernels read (a missing one means the op carries
  another op's options table, or none);
- a shape rule: the declared input shapes (and constant values) -> the output shapes
  TFLite's kernel computes (tensorflow/lite/kernels/*.cc Prepare), or `Invalid` when the
  inputs cannot go together; None when the rule does not say;
- what the passes and the quantized path may assume: which epilogue steps its kernels
  take, whether it only moves values, keeps the quantization grid, reads only the
  PHWC4 layout.
The element-wise ops come from engine/model/elementwise.py. Op types not in the table
are left to the compiler (no kernel: a ModelError there). The kernels that serve an op
register themselves under its name (engine/reference/registry.py `register`, engine/gpu/
kernels/base.py `register`); tests/model/test_op_specs.py checks the three agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.model import elementwise

Shape = tuple[int, ...]
# (op attrs, input shapes (None: left out), constant input values (None: not constant))
Rule = Callable[[dict, list, list], "list[Shape] | None"]

FLOAT = frozenset({"float32", "float16"})
QUANT = frozenset({"int8", "uint8", "int16"})
INDEX = frozenset({"int32", "int64"})
CLASSES = {
    "f": FLOAT,
    "x": FLOAT | QUANT,
    "w": FLOAT | {"int8", "uint8"},
    "b": FLOAT | INDEX,
    "i": INDEX,
    "any": FLOAT | QUANT | INDEX | {"bool", "float64"},
}
PADDINGS = ("SAME", "VALID")
ACTIVATIONS = tuple(elementwise.FUSED)  # fused_activation_function values


class Invalid(Exception):
    """The op's inputs or options cannot go together (the message says how)."""


@dataclass(frozen=True)
class OpSpec:
    inputs: tuple[int, int]  # min, max
    outputs: tuple[int, int] = (1, 1)
    optional: frozenset[int] = frozenset()  # input positions that may be -1
    types: tuple[str, ...] = ()  # type class per input position; the last one repeats
    ranks: dict[int, tuple[int, ...]] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    rule: Rule | None = None
    keeps_size: bool = False  # the output holds exactly the input's elements (reshapes)
    # What the fusion passes may put into the op's epilogue (its GPU kernels apply the
    # steps, engine/gpu/kernels/epilogue.py): "all": activations, element-wise operands
    # and the fake-quant rounding (engine/transforms/fuse.py, quantized.py); "quant": the
    # rounding only; "": nothing.
    epilogue: str = ""
    # Copies input values, no arithmetic: the integer kernel is the float kernel run on
    # the integers (engine/reference/quantized/shape.py), the grid stays the input's.
    moves: bool = False
    same_grid: bool = False  # a quantized result stays on its inputs' grid (max, pad, ...)
    layout_only: bool = False  # sees its input through the PHWC4 layout only (no axis)
    # A MediaPipe custom op: the operator-code version its kernels implement. MediaPipe
    # registers each version of a custom code as a different op (mediapipe/util/tflite/
    # cpu_op_resolver.cc): the importer refuses another version, the writer writes this one.
    version: int | None = None

    def type_class(self, position: int) -> str:
        if not self.types:
            return "any"
        return self.types[min(position, len(self.types) - 1)]


def window_out(padding: str, size: int, k: int, stride: int, dilation: int = 1) -> int:
    """TFLite's output length of a windowed op along one axis (kernels/padding.h: SAME
    ceil(size / stride), VALID ceil((size - (k - 1) * dilation) / stride)); <= 0 when the
    window does not fit."""
    if padding == "SAME":
        return -(-size // stride)
    return -(-(size - (k - 1) * dilation) // stride)


def _positive(a: dict, *names: str) -> list[int]:
    values = [int(a.get(n, 1)) for n in names]
    bad = [f"{n}={v}" for n, v in zip(names, values, strict=True) if v < 1]
    if bad:
        raise Invalid(f"{', '.join(bad)} (must be >= 1)")
    return values


def _padding(a: dict) -> str:
    pad = a.get("padding", "VALID")
    if pad not in PADDINGS:
        raise Invalid(f"padding {pad!r} is not SAME or VALID")
    return pad


def _spatial(a: dict, x: Shape, kh: int, kw: int, dh: int = 1, dw: int = 1) -> tuple[int, int]:
    sh, sw = _positive(a, "stride_h", "stride_w")
    pad, h, w = _padding(a), x[1], x[2]
    if "explicit_padding" in a:  # a PAD merged in (engine/transforms/merge_pad.py)
        top, bottom, left, right = a["explicit_padding"]
        pad, h, w = "VALID", h + top + bottom, w + left + right
    oh, ow = window_out(pad, h, kh, sh, dh), window_out(pad, w, kw, sw, dw)
    if oh < 1 or ow < 1:
        raise Invalid(f"a {kh}x{kw} window (dilation {dh}x{dw}) does not fit input {list(x)}")
    return oh, ow


def _bias(shape: Shape | None, channels: int) -> None:
    if shape is not None and math.prod(shape) != channels:
        raise Invalid(f"bias {list(shape)} for {channels} output channels")


def _weights(w: Shape) -> None:
    if min(w) < 1:
        raise Invalid(f"weights {list(w)} have an empty dimension")


def conv_2d(a: dict, s: list, c: list) -> list[Shape]:
    x, w = s[0], s[1]
    _weights(w)
    o, kh, kw, i = w
    if x[3] % i or o % (x[3] // i or 1) or x[3] < i:
        raise Invalid(f"input channels {x[3]} do not fit weights {list(w)}")
    _bias(s[2] if len(s) > 2 else None, o)
    dh, dw = _positive(a, "dilation_h_factor", "dilation_w_factor")
    return [(x[0], *_spatial(a, x, kh, kw, dh, dw), o)]


def depthwise_conv_2d(a: dict, s: list, c: list) -> list[Shape]:
    x, w = s[0], s[1]
    _weights(w)
    _, kh, kw, oc = w
    if x[3] < 1 or oc % x[3]:
        raise Invalid(f"{oc} output channels for {x[3]} input channels")
    _bias(s[2] if len(s) > 2 else None, oc)
    dh, dw = _positive(a, "dilation_h_factor", "dilation_w_factor")
    return [(x[0], *_spatial(a, x, kh, kw, dh, dw), oc)]


def pool_2d(a: dict, s: list, c: list) -> list[Shape]:
    x = s[0]
    kh, kw = _positive(a, "filter_height", "filter_width")
    return [(x[0], *_spatial(a, x, kh, kw), x[3])]


def fully_connected(a: dict, s: list, c: list) -> list[Shape] | None:
    x, w = s[0], s[1]
    _weights(w)
    o, i = w
    if math.prod(x) % i:
        raise Invalid(f"input {list(x)} is not a multiple of {i} features")
    _bias(s[2] if len(s) > 2 else None, o)
    if a.get("keep_num_dims", False):
        return [(*x[:-1], o)]
    return [(math.prod(x) // i, o)]


def transpose_conv(a: dict, s: list, c: list) -> list[Shape] | None:
    w, x = s[1], s[2]
    _weights(w)
    if w[3] != x[3]:
        raise Invalid(f"input channels {x[3]} do not fit weights {list(w)}")
    _bias(s[3] if len(s) > 3 else None, w[0])
    _positive(a, "stride_h", "stride_w")
    _padding(a)
    if c[0] is None:
        return None
    shape = tuple(int(v) for v in c[0].reshape(-1))
    if len(shape) != 4 or shape[3] != w[0] or min(shape) < 1:
        raise Invalid(f"output_shape {list(shape)} does not fit weights {list(w)}")
    return [shape]


def transpose_conv_bias(a: dict, s: list, c: list) -> list[Shape]:
    """MediaPipe's Convolution2DTransposeBias (mediapipe/util/tflite/operations)."""
    x, w = s[0], s[1]
    _weights(w)
    if w[3] != x[3]:
        raise Invalid(f"input channels {x[3]} do not fit weights {list(w)}")
    _bias(s[2], w[0])
    sh, sw = _positive(a, "stride_h", "stride_w")
    same = _padding(a) == "SAME"
    th = max(0, w[1] - (x[1] - 1) % sh - 1) if same else 0
    tw = max(0, w[2] - (x[2] - 1) % sw - 1) if same else 0
    return [(x[0], sh * (x[1] - 1) + w[1] - th, sw * (x[2] - 1) + w[2] - tw, w[0])]


# --- MediaPipe's landmark ops (mediapipe/util/tflite/operations, version 2) ---------------
# face_landmark_with_attention's sub-crops: their CPU kernels read batch 0 only, so the
# rules ask for batch 1; the 4x4 matrix is any 16-value tensor (the file's is [1, 4, 4]).


def _matrix(shape: Shape) -> None:
    if math.prod(shape) != 16:
        raise Invalid(f"transform matrix {list(shape)} does not hold 16 values")


def landmarks_to_transform_matrix(a: dict, s: list, c: list) -> list[Shape]:
    """Landmarks2TransformMatrix: landmarks [1, N, 3] -> the sub-crop's matrix [1, 4, 4]."""
    x = s[0]
    if x[0] != 1 or x[2] != 3:
        raise Invalid(f"landmarks {list(x)}: expected [1, N, 3]")
    subset = tuple(a.get("subset_idxs", ()))
    if not subset:
        raise Invalid("subset_idxs is empty")
    indices = (a.get("left_rotation_idx", 0), a.get("right_rotation_idx", 0), *subset)
    bad = [i for i in indices if not 0 <= i < x[1]]
    if bad:
        raise Invalid(f"landmark indices {bad[:4]} outside 0..{x[1] - 1}")
    _positive(a, "output_height", "output_width")
    if not (a.get("scale_x", 1.0) > 0 and a.get("scale_y", 1.0) > 0):
        raise Invalid(f"scale {a.get('scale_x')} x {a.get('scale_y')} (must be > 0)")
    return [(1, 4, 4)]


def transform_tensor_bilinear(a: dict, s: list, c: list) -> list[Shape]:
    """TransformTensorBilinear: data [1, H, W, C] and a matrix -> [1, out_h, out_w, C]."""
    x, m = s[0], s[1]
    if x[0] != 1:
        raise Invalid(f"input {list(x)}: expected batch 1")
    _matrix(m)
    oh, ow = _positive(a, "output_height", "output_width")
    return [(1, oh, ow, x[3])]


def transform_landmarks(a: dict, s: list, c: list) -> list[Shape]:
    """TransformLandmarks: landmarks [1, N, 2 or 3] and a matrix -> the same shape."""
    x, m = s[0], s[1]
    if x[0] != 1 or x[2] not in (2, 3):
        raise Invalid(f"landmarks {list(x)}: expected [1, N, 2] or [1, N, 3]")
    _matrix(m)
    return [x]


def broadcast(a: dict, s: list, c: list) -> list[Shape]:
    try:
        return [tuple(np.broadcast_shapes(s[0], s[1]))]
    except ValueError:
        raise Invalid(f"input shapes {list(s[0])} and {list(s[1])} do not broadcast") from None


def same_shape(a: dict, s: list, c: list) -> list[Shape]:
    return [s[0]]


def concatenation(a: dict, s: list, c: list) -> list[Shape]:
    rank = len(s[0])
    axis = int(a.get("axis", 0))
    if not -rank <= axis < rank:
        raise Invalid(f"axis {axis} outside rank {rank}")
    axis %= rank
    rest = [d for k, d in enumerate(s[0]) if k != axis]
    for shape in s[1:]:
        if len(shape) != rank or [d for k, d in enumerate(shape) if k != axis] != rest:
            raise Invalid(f"inputs {[list(x) for x in s]} differ outside axis {axis}")
    return [(*s[0][:axis], sum(x[axis] for x in s), *s[0][axis + 1 :])]


def pad(a: dict, s: list, c: list) -> list[Shape] | None:
    x = s[0]
    if c[1] is None:
        return None
    p = c[1]
    if p.shape != (len(x), 2) or (p < 0).any():
        raise Invalid(f"paddings {p.tolist()} do not fit a rank-{len(x)} input")
    return [tuple(int(d + lo + hi) for d, (lo, hi) in zip(x, p.tolist(), strict=True))]


def resize(a: dict, s: list, c: list) -> list[Shape] | None:
    x = s[0]
    if c[1] is None:
        return None
    size = [int(v) for v in c[1].reshape(-1)]
    if len(size) != 2 or min(size) < 1:
        raise Invalid(f"size {size} is not two positive numbers")
    return [(x[0], size[0], size[1], x[3])]


def depth_to_space(a: dict, s: list, c: list) -> list[Shape]:
    n, h, w, ch = s[0]
    (b,) = _positive(a, "block_size")
    if ch % (b * b):
        raise Invalid(f"{ch} channels do not split into {b}x{b} blocks")
    return [(n, h * b, w * b, ch // (b * b))]


def space_to_depth(a: dict, s: list, c: list) -> list[Shape]:
    n, h, w, ch = s[0]
    (b,) = _positive(a, "block_size")
    if h % b or w % b:
        raise Invalid(f"input {h}x{w} does not split into {b}x{b} blocks")
    return [(n, h // b, w // b, ch * b * b)]


def _axes(values: np.ndarray | None, rank: int) -> list[int] | None:
    if values is None:
        return None
    axes = [int(v) for v in values.reshape(-1)]
    if any(not -rank <= v < max(rank, 1) for v in axes):
        raise Invalid(f"axes {axes} outside rank {rank}")
    return axes


def reduce(a: dict, s: list, c: list) -> None:
    _axes(c[1], len(s[0]))
    return None


def transpose(a: dict, s: list, c: list) -> list[Shape] | None:
    if c[1] is None:
        return None
    perm = [int(v) for v in c[1].reshape(-1)]
    if sorted(perm) != list(range(len(s[0]))):
        raise Invalid(f"perm {perm} is not a permutation of rank {len(s[0])}")
    return [tuple(s[0][p] for p in perm)]


def split(a: dict, s: list, c: list) -> None:
    x = s[1]
    (n,) = _positive(a, "num_splits")
    axes = _axes(c[0], len(x))
    if axes is not None and (len(axes) != 1 or x[axes[0]] % n):
        raise Invalid(f"axis {axes} of {list(x)} does not split in {n}")
    return None


def slice_(a: dict, s: list, c: list) -> list[Shape] | None:
    x = s[0]
    if c[1] is None or c[2] is None:
        return None
    begin, size = c[1].reshape(-1).tolist(), c[2].reshape(-1).tolist()
    if len(begin) != len(x) or len(size) != len(x):
        raise Invalid(f"begin {begin} / size {size} do not fit a rank-{len(x)} input")
    out = tuple(d - b if n == -1 else n for d, b, n in zip(x, begin, size, strict=True))
    if any(b < 0 or n < 0 or b + n > d for d, b, n in zip(x, begin, out, strict=True)):
        raise Invalid(f"begin {begin} size {size} outside input {list(x)}")
    return [out]


def gather(a: dict, s: list, c: list) -> None:
    x = s[0]
    rank = len(x)
    axis = int(a.get("axis", 0))
    if not -rank <= axis < max(rank, 1):
        raise Invalid(f"axis {axis} outside rank {rank}")
    if c[1] is not None and rank and ((c[1] < 0) | (c[1] >= x[axis % rank])).any():
        raise Invalid(f"indices outside dimension {x[axis % rank]}")
    return None


def tile(a: dict, s: list, c: list) -> list[Shape] | None:
    if c[1] is None:
        return None
    mult = [int(v) for v in c[1].reshape(-1)]
    if len(mult) != len(s[0]) or min(mult, default=1) < 0:
        raise Invalid(f"multiples {mult} do not fit a rank-{len(s[0])} input")
    return [tuple(d * m for d, m in zip(s[0], mult, strict=True))]


_X, _XW, _XWB = ("x",), ("x", "w"), ("x", "w", "b")
# Other ops of the element-wise shape rules (no kernel runs most of them: checked only)
_SAME_SHAPE = ("QUANTIZE", "DEQUANTIZE", "DENSIFY", "ABS", "EXP", "LOG", "SQRT", "SQUARE", "SIN",
               "COS", "L2_NORMALIZATION")  # fmt: skip
_CONV_RANKS = {0: (4,), 1: (4,), 2: (1,)}
_WINDOW = ("padding", "stride_w", "stride_h")
_POOL = ("padding", "filter_width", "filter_height")
_LANDMARKS_MATRIX = ("left_rotation_idx", "right_rotation_idx", "subset_idxs", "output_height",
                     "output_width", "scale_x", "scale_y", "target_rotation_radians")  # fmt: skip

SPECS: dict[str, OpSpec] = {
    "CONV_2D": OpSpec((2, 3), optional=frozenset({2}), types=_XWB, ranks=_CONV_RANKS,
                      options=_WINDOW, rule=conv_2d, epilogue="all", layout_only=True),
    "DEPTHWISE_CONV_2D": OpSpec((2, 3), optional=frozenset({2}), types=_XWB,
                                ranks=_CONV_RANKS, options=_WINDOW,
                                rule=depthwise_conv_2d, epilogue="all", layout_only=True),
    "TRANSPOSE_CONV": OpSpec((3, 4), optional=frozenset({3}), types=("i", "w", "x", "b"),
                             ranks={0: (1,), 1: (4,), 2: (4,), 3: (1,)},
                             options=_WINDOW, rule=transpose_conv, epilogue="all"),
    "Convolution2DTransposeBias": OpSpec((3, 3), types=_XWB, ranks={0: (4,), 1: (4,), 2: (1,)},
                                         options=_WINDOW, rule=transpose_conv_bias,
                                         epilogue="all", version=1),
    "Landmarks2TransformMatrix": OpSpec((1, 1), types=("f",), ranks={0: (3,)},
                                        options=_LANDMARKS_MATRIX,
                                        rule=landmarks_to_transform_matrix, version=2),
    "TransformTensorBilinear": OpSpec((2, 2), types=("f",), ranks={0: (4,)},
                                      options=("output_height", "output_width"),
                                      rule=transform_tensor_bilinear, version=2),
    "TransformLandmarks": OpSpec((2, 2), types=("f",), ranks={0: (3,)},
                                 rule=transform_landmarks, version=2),
    "FULLY_CONNECTED": OpSpec((2, 3), optional=frozenset({2}), types=_XWB,
                              ranks={1: (2,), 2: (1,)}, rule=fully_connected, epilogue="all"),
    "MAX_POOL_2D": OpSpec((1, 1), types=_X, ranks={0: (4,)}, options=_POOL, rule=pool_2d,
                          epilogue="all", same_grid=True, layout_only=True),
    "AVERAGE_POOL_2D": OpSpec((1, 1), types=_X, ranks={0: (4,)}, options=_POOL, rule=pool_2d,
                              epilogue="all", layout_only=True),
    **{t: OpSpec((1, 1), types=("any",), rule=same_shape, epilogue="quant", layout_only=True)
       for t in elementwise.UNARY},
    **{t: OpSpec((2, 2), types=("any",), rule=broadcast, epilogue=b.epilogue,
                 same_grid=b.same_grid) for t, b in elementwise.BINARY.items()},
    "POW": OpSpec((2, 2), types=("any",), rule=broadcast),
    **{t: OpSpec((1, 1), types=("any",), rule=same_shape) for t in _SAME_SHAPE},
    "SOFTMAX": OpSpec((1, 1), types=("any",), rule=same_shape, epilogue="quant"),
    "PRELU": OpSpec((2, 2), types=("x", "w"), rule=broadcast, epilogue="quant"),
    "CONCATENATION": OpSpec((1, 1 << 16), types=("any",), rule=concatenation, epilogue="all",
                            same_grid=True),
    "PACK": OpSpec((1, 1 << 16), types=("any",), moves=True),
    "UNPACK": OpSpec((1, 1), (1, 1 << 16), types=("any",), moves=True),
    "RESHAPE": OpSpec((1, 2), types=("any", "i"), keeps_size=True, moves=True),
    "SQUEEZE": OpSpec((1, 1), types=("any",), keeps_size=True, moves=True),
    "EXPAND_DIMS": OpSpec((2, 2), types=("any", "i"), keeps_size=True, moves=True),
    "PAD": OpSpec((2, 2), types=("any", "i"), ranks={1: (2,)}, rule=pad, same_grid=True),
    "PADV2": OpSpec((3, 3), types=("any", "i", "any"), ranks={1: (2,)}, rule=pad,
                    same_grid=True),
    "RESIZE_BILINEAR": OpSpec((2, 2), types=("x", "i"), ranks={0: (4,), 1: (1,)}, rule=resize,
                              epilogue="quant", layout_only=True),
    "RESIZE_NEAREST_NEIGHBOR": OpSpec((2, 2), types=("x", "i"), ranks={0: (4,), 1: (1,)},
                                      rule=resize, epilogue="quant", moves=True,
                                      layout_only=True),
    "DEPTH_TO_SPACE": OpSpec((1, 1), types=_X, ranks={0: (4,)}, options=("block_size",),
                             rule=depth_to_space, moves=True),
    "SPACE_TO_DEPTH": OpSpec((1, 1), types=_X, ranks={0: (4,)}, options=("block_size",),
                             rule=space_to_depth, moves=True),
    "MEAN": OpSpec((2, 2), types=("any", "i"), ranks={1: (0, 1)}, rule=reduce, epilogue="quant"),
    **{t: OpSpec((2, 2), types=("any", "i"), ranks={1: (0, 1)}, rule=reduce)
       for t in ("SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN")},
    "TRANSPOSE": OpSpec((2, 2), types=("any", "i"), ranks={1: (1,)}, rule=transpose, moves=True),
    "SPLIT": OpSpec((2, 2), (1, 1 << 16), types=("i", "any"), ranks={0: (0, 1)},
                    options=("num_splits",), rule=split, moves=True),
    "SPLIT_V": OpSpec((3, 3), (1, 1 << 16), types=("any", "i", "i"), moves=True),
    "SLICE": OpSpec((3, 3), types=("any", "i", "i"), ranks={1: (1,), 2: (1,)}, rule=slice_,
                    moves=True),
    "STRIDED_SLICE": OpSpec((4, 4), types=("any", "i", "i", "i"),
                            ranks={1: (1,), 2: (1,), 3: (1,)}, moves=True),
    "GATHER": OpSpec((2, 2), types=("any", "i"), rule=gather, moves=True),
    # moves values too, but has no integer kernel yet (no LiteRT-checked int8 TILE case)
    "TILE": OpSpec((2, 2), types=("any", "i"), ranks={1: (1,)}, rule=tile),
    "SHAPE": OpSpec((1, 1), types=("any",)),
    "BATCH_MATMUL": OpSpec((2, 2), types=("x", "x")),
}  # fmt: skip


def output_shapes(op_type: str, attrs: dict, shapes: list, values: list) -> list[Shape] | None:
    """The output shapes of an `op_type` op with these attributes, input shapes (None: left
    out) and constant input values (None: not known): its rule's answer, None where the
    table has no rule or the rule does not say; Invalid when the inputs cannot go together.
    The one home of shape rules: validate, resize_inputs, the graph builder and the
    reference's probe (engine/reference/registry.py output_types) ask here."""
    spec = SPECS.get(op_type)
    if spec is None or spec.rule is None:
        return None
    return spec.rule(attrs, shapes, values)
