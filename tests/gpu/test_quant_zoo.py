"""The keras zoo (MobileNetV2/V3Small, EfficientNetB0, ResNet50, U-Net in every converter
variant) on the GPU vs LiteRT, with the tolerances of tests/gpu/test_quant_models.py.

Slow, and only where the zoo was built: `python -m benchmarks.engine.model_zoo` (TensorFlow
in a side venv) writes out/zoo/*.tflite; without them the module skips.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.engine.model_zoo import error, litert, seeded_input
from engine.gpu.engine import Engine
from engine.model.importer import load_tflite
from tests.helpers.gpu import gpu_context

pytest.importorskip("ai_edge_litert")
gpu_context()

ZOO = Path(__file__).resolve().parents[2] / "out" / "zoo"
FILES = sorted(ZOO.glob("*.tflite"))
if not FILES:
    pytest.skip(
        f"no zoo models in {ZOO}: run python -m benchmarks.engine.model_zoo",
        allow_module_level=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_zoo_model_vs_litert(path):
    g = load_tflite(path)
    engine = Engine(g)
    assert engine.fallback_ops == []
    x = seeded_input(g)
    got = engine.run({g.tensors[g.inputs[0]].name: x})[g.tensors[g.outputs[0]].name]
    err, unit = error(g, got, litert(path)(x))
    if unit == "steps":
        assert err <= 1 + 1e-4
    else:
        assert err <= (1e-2 if "dynamic" in path.stem else 1e-4), err
    assert np.isfinite(got.astype(np.float64)).all()
