"""resize_inputs: shapes propagate from fixed inputs, as LiteRT's resize_tensor_input;
only dynamic (-1) dimensions may change."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.model.importer import load_tflite
from engine.reference import Interpreter
from engine.transforms.resize_inputs import has_dynamic_shapes, resize_inputs
from tests.helpers.single_op import max_error

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "ops"
MODEL = FIXTURES / "convnet_dynamic_batch.tflite"
INPUT = "serving_default_image:0"


def _litert(batch: int, x: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    it = LiteRT(model_path=str(MODEL))
    it.resize_tensor_input(0, [batch, 24, 24, 3], strict=True)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def test_signature_read_from_the_file():
    graph = load_tflite(MODEL)
    assert has_dynamic_shapes(graph)
    assert graph.tensors[graph.inputs[0]].signature == (-1, 24, 24, 3)
    assert not has_dynamic_shapes(load_tflite(FIXTURES / "vit_tiny.tflite"))


@pytest.mark.parametrize("batch", [1, 3])
def test_propagated_shapes_match_litert(batch):
    pytest.importorskip("ai_edge_litert")
    graph = resize_inputs(load_tflite(MODEL), {INPUT: (batch, 24, 24, 3)})
    assert graph.tensors[graph.outputs[0]].shape == (batch, 10)
    # The file's placeholder [1, 1] for the dense layer's reshape is now [batch * 144, 16].
    assert (batch * 144, 16) in {t.shape for t in graph.tensors}
    x = np.random.default_rng(batch).standard_normal((batch, 24, 24, 3)).astype(np.float32)
    got = Interpreter(graph).run([x])  # strict shapes: every op agrees with the graph
    assert max_error(_litert(batch, x), next(iter(got.values()))) <= 1e-5


def test_only_dynamic_dimensions_resize():
    graph = load_tflite(MODEL)
    with pytest.raises(ValueError, match=r"dimension\(s\) \[1\] .* are fixed"):
        resize_inputs(graph, {INPUT: (2, 32, 24, 3)})
    with pytest.raises(ValueError, match="no graph input named"):
        resize_inputs(graph, {"image": (2, 24, 24, 3)})
    with pytest.raises(ValueError, match="does not fit"):
        resize_inputs(graph, {INPUT: (2, 24, 24)})
