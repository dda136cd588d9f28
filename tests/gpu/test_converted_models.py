"""Real TFLiteConverter models (tests/data/ops, made by make_models.py) on the engine vs
LiteRT: a tiny ViT, a conv net with a dynamic batch, Keras' nearest UpSampling2D.

fp32 within 1e-4 relative of LiteRT (XNNPACK, the default), fp16 within 1e-2; every op
on the GPU (CPU_FALLBACK lists the expected exceptions: none). A model the engine cannot
store says which op and why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.errors import ModelError
from engine.model.importer import load_tflite
from tests.helpers.gpu import gpu_context
from tests.helpers.single_op import max_error

ctx = gpu_context()
pytest.importorskip("ai_edge_litert")

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "ops"
CPU_FALLBACK = {"vit_tiny": [], "convnet_dynamic_batch": [], "upsample_nearest": []}
TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2}


def litert(path: Path, x: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(path))
    it.resize_tensor_input(0, list(x.shape), strict=True)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def run_engine(path: Path, x: np.ndarray, **opts):
    from engine.gpu.engine import Engine

    engine = Engine.from_tflite(path, **opts)
    return engine, next(iter(engine.run([x]).values()))


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", sorted(CPU_FALLBACK))
def test_model_matches_litert(name, precision):
    path = FIXTURES / f"{name}.tflite"
    shape = load_tflite(path).tensors[load_tflite(path).inputs[0]].shape
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    engine, got = run_engine(path, x, precision=precision)
    assert engine.fallback_ops == CPU_FALLBACK[name]
    err = max_error(litert(path, x), got)
    assert err <= TOLERANCE[precision], f"{name} {precision}: error {err:.3g}"


def test_vit_runs_fused_layer_norms_on_the_gpu():
    engine, _ = run_engine(FIXTURES / "vit_tiny.tflite", np.zeros((1, 32, 32, 3), np.float32))
    hist = engine.graph.op_histogram()
    assert hist["LAYER_NORM"] == 5 and hist["BATCH_MATMUL"] == 4 and hist["GELU"] == 2
    assert {"NEG", "RSQRT", "SQUARED_DIFFERENCE"}.isdisjoint(hist)


def test_upsampling_becomes_a_resize():
    engine, _ = run_engine(
        FIXTURES / "upsample_nearest.tflite", np.zeros((1, 12, 16, 3), np.float32)
    )
    assert [op.type for op in engine.graph.ops] == ["CONV_2D", "RESIZE_NEAREST_NEIGHBOR", "CONV_2D"]


@pytest.mark.parametrize("batch", [1, 3])
def test_dynamic_batch_resizes_like_litert(batch):
    path = FIXTURES / "convnet_dynamic_batch.tflite"
    x = np.random.default_rng(batch).standard_normal((batch, 24, 24, 3)).astype(np.float32)
    engine, got = run_engine(path, x, input_shapes={"serving_default_image:0": x.shape})
    assert got.shape == (batch, 10) and engine.fallback_ops == []
    assert not {"SHAPE", "PACK", "GATHER", "REDUCE_PROD"} & set(engine.graph.op_histogram())
    assert max_error(litert(path, x), got) <= 1e-4


def test_rank5_tensor_names_file_op_and_why():
    """Without the transforms nothing collapses the rank-5 upsampling chain."""
    path = FIXTURES / "upsample_nearest.tflite"
    with pytest.raises(ModelError, match=r"upsample_nearest.tflite: op #1 RESHAPE: tensor .* "
                       r"\[1, 12, 1, 16, 8\] has rank 5; the GPU stores rank <= 4"):  # fmt: skip
        run_engine(path, np.zeros((1, 12, 16, 3), np.float32), transforms=False)


def test_unfolded_shape_arithmetic_names_file_op_and_why():
    path = FIXTURES / "convnet_dynamic_batch.tflite"
    with pytest.raises(ModelError, match=r"convnet_dynamic_batch.tflite: op #4 SHAPE: tensor "
                       r".* is int32; the GPU stores float tensors only"):  # fmt: skip
        run_engine(path, np.zeros((1, 24, 24, 3), np.float32), transforms=False)
