"""Keras models with seeded random weights, converted by TensorFlow's TFLiteConverter in each
converter variant. Runs in a side venv with tensorflow-cpu (not a project dependency):
no `engine` import here.

Variants (the converter settings a user picks):
- fp32:        no optimisation;
- fp16:        float16 weights (constant DEQUANTIZE to float32 at load);
- dynamic:     dynamic-range int8 weights, float activations (hybrid kernels);
- int8:        full integer, int8 graph inputs and outputs;
- int8_float_io: full integer inside, float32 inputs/outputs (QUANTIZE/DEQUANTIZE ops).

usage: /work/venvs/tf/bin/python tests/data/quant/keras_convert.py OUT_DIR MODEL[:SIZE] ...
       (MODEL: convnet, unet, mobilenet_v2, mobilenet_v3_small, efficientnet_b0, resnet50)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

VARIANTS = ("fp32", "fp16", "dynamic", "int8", "int8_float_io")
CALIBRATION_SAMPLES = 8  # representative inputs for full-int8 calibration (seeded)


def _keras():
    import keras

    return keras


def convnet(size: int = 32):
    """A small classifier: conv 3x3/2, depthwise 3x3, 1x1, residual add, hard-swish,
    average pool, global mean, dense, softmax. Most weight tensors hold >= 1024 values,
    the size from which dynamic-range quantization quantizes them (the last dense
    stays float: a model mixing both)."""
    k = _keras()
    x = inp = k.Input((size, size, 3), batch_size=1, name="image")
    x = k.layers.Conv2D(40, 3, strides=2, padding="same", activation="relu6")(x)
    y = k.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=3)(x)  # 3x3x120
    y = k.layers.ReLU()(y)
    y = k.layers.Conv2D(40, 1)(y)
    x = k.layers.Add()([x, y])
    x = k.layers.Activation("hard_swish")(x)
    x = k.layers.AveragePooling2D(2)(x)
    x = k.layers.Conv2D(24, 3, padding="valid", activation="relu")(x)
    x = k.layers.GlobalAveragePooling2D()(x)
    x = k.layers.Dense(48, activation="sigmoid")(x)
    x = k.layers.Dense(10, activation="softmax", name="probs")(x)
    return k.Model(inp, x, name="convnet")


def unet(size: int = 32):
    """A tiny U-Net: two down levels (conv + max pool), TRANSPOSE_CONV up, skip concat,
    a bilinear resize and a sigmoid mask head."""
    k = _keras()
    x = inp = k.Input((size, size, 3), batch_size=1, name="image")
    c1 = k.layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    p1 = k.layers.MaxPooling2D(2)(c1)
    c2 = k.layers.Conv2D(16, 3, padding="same", activation="relu")(p1)
    p2 = k.layers.MaxPooling2D(2)(c2)
    b = k.layers.Conv2D(32, 3, padding="same", activation="relu")(p2)
    u2 = k.layers.Conv2DTranspose(16, 2, strides=2, padding="same")(b)
    m2 = k.layers.Concatenate()([u2, c2])
    c3 = k.layers.Conv2D(16, 3, padding="same", activation="relu")(m2)
    u1 = k.layers.UpSampling2D(2, interpolation="bilinear")(c3)
    m1 = k.layers.Concatenate()([u1, c1])
    c4 = k.layers.Conv2D(8, 3, padding="same", activation="relu")(m1)
    out = k.layers.Conv2D(1, 1, activation="sigmoid", name="mask")(c4)
    return k.Model(inp, out, name="unet")


def application(name: str):
    """A keras.applications network with random weights (weights=None) on a batch-1
    input (a fixed batch: the converter then writes no dynamic-shape ops)."""
    k = _keras()
    apps = {
        "mobilenet_v2": lambda t: k.applications.MobileNetV2(input_tensor=t, weights=None),
        "mobilenet_v3_small": lambda t: k.applications.MobileNetV3Small(
            input_tensor=t, weights=None, include_preprocessing=False
        ),
        "efficientnet_b0": lambda t: k.applications.EfficientNetB0(input_tensor=t, weights=None),
        "resnet50": lambda t: k.applications.ResNet50(input_tensor=t, weights=None),
    }
    return lambda size: apps[name](k.Input((size, size, 3), batch_size=1, name="image"))


def build(name: str, size: int):
    """The keras model `name` at input size `size`, weights seeded."""
    k = _keras()
    k.utils.set_random_seed(0)
    if name == "convnet":
        return convnet(size)
    if name == "unet":
        return unet(size)
    return application(name)(size)


def _perturb_batchnorm(model, rng) -> None:
    """Random BatchNorm statistics (fresh models have mean 0, variance 1: folding them
    would leave the weights as initialised), so folded scales and biases vary."""
    for layer in model.layers:
        if type(layer).__name__ != "BatchNormalization":
            continue
        gamma, beta, mean, var = layer.get_weights()
        layer.set_weights(
            [
                rng.uniform(0.5, 1.5, gamma.shape).astype("float32"),
                rng.uniform(-0.2, 0.2, beta.shape).astype("float32"),
                rng.uniform(-0.2, 0.2, mean.shape).astype("float32"),
                rng.uniform(0.5, 1.5, var.shape).astype("float32"),
            ]
        )


def convert(model, variant: str) -> bytes:
    """The model as a .tflite flatbuffer in converter variant `variant`."""
    import numpy as np
    import tensorflow as tf

    shape = tuple(model.inputs[0].shape)
    rng = np.random.default_rng(1)
    _perturb_batchnorm(model, np.random.default_rng(2))
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if variant != "fp32":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if variant == "fp16":
        conv.target_spec.supported_types = [tf.float16]
    if variant.startswith("int8"):
        samples = [rng.uniform(-1, 1, shape).astype("float32") for _ in range(CALIBRATION_SAMPLES)]
        conv.representative_dataset = lambda: ([s] for s in samples)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if variant == "int8":
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("models", nargs="+", help="NAME or NAME:SIZE")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for item in args.models:
        name, _, size = item.partition(":")
        for variant in args.variants.split(","):
            path = args.out / f"{name}_{variant}.tflite"
            if path.exists():
                continue
            data = convert(build(name, int(size or 32)), variant)
            path.write_bytes(data)
            print(f"{path} {len(data):,} B", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
