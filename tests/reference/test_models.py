"""Whole MediaPipe models (when fetched) on the reference interpreter vs LiteRT.

Two checks per model:
- op by op: each reference kernel is fed LiteRT's own intermediate tensors (reference
  kernels, all tensors preserved) and must match LiteRT's output to 1e-5, relative to the
  larger of the output and, for a weighted op, the bound on its sum before the activation
  (a Relu6 clamps at 6 sums of terms up to ~1000 in pose_landmark_heavy, which float32
  accumulates to ~1e-4: 2e-5 of the clamped output, 1e-7 of the sum);
- end to end: outputs agree to 1e-3. Float32 rounding, amplified through dozens of
  layers, is that large: LiteRT's XNNPACK and reference kernels differ by ~3e-4 on
  pose_landmark_full's segmentation output.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from engine.catalog.manifest import load_manifest
from engine.model.importer import load_tflite
from engine.reference import Interpreter, registry, supported_ops
from engine.reference.landmark_ops import NO_LITERT_KERNEL
from tests.helpers.files import fetched_models
from tests.helpers.single_op import max_error

pytest.importorskip("ai_edge_litert")

MODELS = fetched_models()
# Op by op needs LiteRT's builtin reference resolver, which has no MediaPipe custom op:
# those models (manifest: custom_ops) are checked end to end only.
BUILTIN_ONLY = [p for p in MODELS if not load_manifest().get(p.stem).custom_ops]
# End to end needs LiteRT to run the model: MediaPipe's landmark ops have no LiteRT kernel,
# so face_landmark_with_attention is checked against the float64 reference on the GPU
# instead (tests/gpu/test_landmark_ops.py, tests/gpu/test_litert_models.py)
LITERT_RUNS = [
    p for p in MODELS if not set(load_manifest().get(p.stem).custom_ops) & NO_LITERT_KERNEL
]


def test_every_model_has_a_reference_kernel_for_each_op():
    for path in MODELS:
        missing = sorted({op.type for op in load_tflite(path).ops} - supported_ops())
        assert missing == [], (path.name, missing)


def _litert(path, feeds, xnnpack=False, preserve=False):
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from ai_edge_litert.interpreter import OpResolverType

    resolver = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_REF
    it = LiteRT(
        model_path=str(path),
        experimental_op_resolver_type=resolver,
        experimental_preserve_all_tensors=preserve,
    )
    it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], feeds[d["name"]])
    it.invoke()
    return it


def _feeds(g):
    rng = np.random.default_rng(0)
    return {
        g.tensors[t].name: rng.uniform(0, 1, g.tensors[t].shape).astype(np.float32)
        for t in g.inputs
    }


def _has_custom(g):
    return any(op.custom for op in g.ops)


@pytest.mark.parametrize("path", LITERT_RUNS, ids=lambda p: p.stem)
def test_model_end_to_end(path):
    g = load_tflite(path)
    feeds = _feeds(g)
    # MediaPipe's custom ops exist only in LiteRT's XNNPACK delegate.
    it = _litert(path, feeds, xnnpack=_has_custom(g))
    want = {d["name"]: it.get_tensor(d["index"]) for d in it.get_output_details()}
    got = Interpreter(g, np.float64).run(feeds)
    for name, ref in want.items():
        assert max_error(ref, got[name]) <= 1e-3, name


# the axis of a weighted op's weights that indexes its output channels
WEIGHT_OUT_AXIS = {"CONV_2D": 0, "FULLY_CONNECTED": 0, "DEPTHWISE_CONV_2D": 3}


def _clamp_factor(op_type, args, ref) -> float:
    """max(1, max|ref|) / max(1, max|ref|, bound on the sum before the activation): 1 for an
    op without weights. The bound: max|x| times the largest sum of one channel's |w|, plus
    max|bias|. Float32 rounds the sum, not the clamped result."""
    axis = WEIGHT_OUT_AXIS.get(op_type)
    if axis is None or len(args) < 2 or args[1] is None:
        return 1.0
    x, w = np.abs(args[0]), np.abs(np.asarray(args[1], np.float64))
    per_channel = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1).sum(axis=1)
    bias = np.abs(args[2]).max() if len(args) > 2 and args[2] is not None else 0.0
    bound = float(x.max() * per_channel.max() + bias)
    out = max(1.0, float(np.abs(ref).max()))
    return out / max(out, bound)


@pytest.mark.parametrize("path", BUILTIN_ONLY, ids=lambda p: p.stem)
def test_model_op_by_op(path):
    g = load_tflite(path)
    assert not _has_custom(g)  # the manifest's custom_ops says so
    feeds = _feeds(g)
    it = _litert(path, feeds, preserve=True)
    counts = Counter(d["name"] for d in it.get_tensor_details())
    index = {d["name"]: d["index"] for d in it.get_tensor_details() if counts[d["name"]] == 1}

    def litert_value(t):
        tensor = g.tensors[t]
        if tensor.data is not None:
            return tensor.data.astype(np.float64) if tensor.data.dtype.kind == "f" else tensor.data
        v = it.get_tensor(index[tensor.name])
        return v.astype(np.float64) if v.dtype.kind == "f" else v

    def known(t):
        return t < 0 or g.tensors[t].data is not None or g.tensors[t].name in index

    checked = 0
    for i, op in enumerate(g.ops):
        if not all(known(t) for t in (*op.inputs, *op.outputs)):
            continue  # a tensor LiteRT names ambiguously: covered end to end
        args = [litert_value(t) if t >= 0 else None for t in op.inputs]
        outs = registry.kernel(op.type)(op, args)
        for t, y in zip(op.outputs, outs, strict=True):
            err = max_error(litert_value(t), y) * _clamp_factor(op.type, args, litert_value(t))
            assert err <= 1e-5, f"op #{i} {op.type} -> {g.tensors[t].name}: {err:.3g}"
        checked += 1
    assert checked >= len(g.ops) // 2, f"only {checked} of {len(g.ops)} ops compared"
