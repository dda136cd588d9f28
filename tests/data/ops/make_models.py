"""Build the op-coverage fixtures with TensorFlow's TFLiteConverter (random seeded weights).

Run in a side venv with tensorflow-cpu (not a project dependency):
    /work/venvs/tf/bin/python tests/data/ops/make_models.py [OUT_DIR]
Writes (default: next to this file):
- vit_tiny.tflite: 32x32x3 -> 10 classes; 4x4 patch-embedding conv (64 tokens, width 32),
  learned position embedding, 2 pre-norm transformer blocks (LayerNormalization,
  MultiHeadAttention with 2 heads, GELU MLP 32-64-32), LayerNorm, token mean, dense head;
- convnet_dynamic_batch.tflite: 24x24x3 -> 10, batch dimension left dynamic (-1 in the
  shape signature), so the converter keeps SHAPE / STRIDED_SLICE / PACK / GATHER /
  REDUCE_PROD / EXPAND_DIMS shape arithmetic in the graph;
- upsample_nearest.tflite: conv, Keras UpSampling2D(2, "nearest"), conv.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow import keras  # noqa: E402

SEED = 1234


def vit_tiny() -> keras.Model:
    width, heads, tokens = 32, 2, 64
    x_in = keras.Input((32, 32, 3), batch_size=1, name="image")
    x = keras.layers.Conv2D(width, 4, strides=4, name="patch_embed")(x_in)
    x = keras.layers.Reshape((tokens, width))(x)
    pos = keras.layers.Embedding(tokens, width, name="pos_embed")(tf.range(tokens)[None])
    x = x + pos
    for i in range(2):
        h = keras.layers.LayerNormalization(epsilon=1e-6, name=f"ln{i}a")(x)
        h = keras.layers.MultiHeadAttention(heads, width // heads, name=f"attn{i}")(h, h)
        x = x + h
        h = keras.layers.LayerNormalization(epsilon=1e-6, name=f"ln{i}b")(x)
        h = keras.layers.Dense(2 * width, activation="gelu", name=f"mlp{i}a")(h)
        h = keras.layers.Dense(width, name=f"mlp{i}b")(h)
        x = x + h
    x = keras.layers.LayerNormalization(epsilon=1e-6, name="ln_final")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(10, name="head")(x)
    return keras.Model(x_in, out, name="vit_tiny")


class PixelsToTokens(keras.layers.Layer):
    """[B, H, W, C] -> [B, H*W, C] with the shapes read at run time, as hand-written TF
    models do: SHAPE, GATHER (batch), STRIDED_SLICE + REDUCE_PROD (H*W), EXPAND_DIMS +
    CONCATENATION (the new shape)."""

    def call(self, x):
        s = tf.shape(x)
        batch = tf.expand_dims(tf.gather(s, 0), 0)
        pixels = tf.expand_dims(tf.reduce_prod(s[1:3]), 0)
        return tf.reshape(x, tf.concat([batch, pixels, s[3:]], 0))


def convnet_dynamic_batch() -> keras.Model:
    x_in = keras.Input((24, 24, 3), name="image")  # batch None: dynamic
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(x_in)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    t = PixelsToTokens()(x)  # [B, 144, 16]
    t = keras.layers.Dense(16, activation="relu")(t)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)  # Keras' own: SHAPE, STRIDED_SLICE, PACK, RESHAPE
    x = keras.layers.Concatenate()([x, keras.layers.GlobalAveragePooling1D()(t)])
    out = keras.layers.Dense(10)(x)
    return keras.Model(x_in, out, name="convnet_dynamic_batch")


def upsample_nearest() -> keras.Model:
    x_in = keras.Input((12, 16, 3), batch_size=1, name="image")
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(x_in)
    x = keras.layers.UpSampling2D(2, interpolation="nearest")(x)
    out = keras.layers.Conv2D(4, 3, padding="same")(x)
    return keras.Model(x_in, out, name="upsample_nearest")


def randomize(model: keras.Model, rng: np.random.Generator) -> None:
    """Seeded weights everywhere, biases, LayerNorm gammas and betas included (Keras
    initialises those to 0 / 1, which the converter may fold away)."""
    for w in model.weights:
        fan_in = int(np.prod(w.shape[:-1])) if len(w.shape) > 1 else 1
        scale = 1.0 / np.sqrt(fan_in) if len(w.shape) > 1 else 0.2
        value = rng.normal(0.0, scale, w.shape)
        if "gamma" in w.path:
            value += 1.0
        w.assign(value.astype(np.float32))


def convert(model: keras.Model) -> bytes:
    return tf.lite.TFLiteConverter.from_keras_model(model).convert()


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for build in (vit_tiny, convnet_dynamic_batch, upsample_nearest):
        keras.utils.set_random_seed(SEED)
        model = build()
        randomize(model, np.random.default_rng(SEED))
        data = convert(model)
        path = out_dir / f"{build.__name__}.tflite"
        path.write_bytes(data)
        print(f"{path}: {len(data):,} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
