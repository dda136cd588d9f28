"""rebatch (engine/transforms/resize_inputs.py): a model of batch 1 on n images, its shapes
against LiteRT's resize_tensor_input of the same file."""

from __future__ import annotations

import pytest

from engine.errors import ModelError
from engine.model.importer import load_tflite
from engine.transforms.resize_inputs import rebatch
from tests.helpers.files import model_file


def litert_output_shapes(path, n: int) -> list[tuple[int, ...]]:
    """LiteRT's output shapes after resizing the input's batch to n (the oracle)."""
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=str(path))
    (x,) = interp.get_input_details()
    interp.resize_tensor_input(x["index"], [n, *x["shape"][1:]])
    interp.allocate_tensors()
    return [tuple(int(d) for d in o["shape"]) for o in interp.get_output_details()]


@pytest.mark.parametrize("name", ["face_landmark", "hand_landmark_full", "hand_recrop"])
@pytest.mark.parametrize("n", [2, 3])
def test_rebatch_gives_litert_shapes(name, n):
    path = model_file(name)
    graph = rebatch(load_tflite(path), n)
    assert [graph.tensors[t].shape[0] for t in graph.inputs] == [n]
    ours = {graph.tensors[t].name: graph.tensors[t].shape for t in graph.outputs}
    assert sorted(ours.values()) == sorted(litert_output_shapes(path, n))
    assert all(shape[0] == n for shape in ours.values())


def test_rebatch_refuses_a_reshape_to_a_fixed_batch():
    # face_landmark_with_attention reshapes its landmarks to [1, 468, 3]
    with pytest.raises(ModelError, match=r"RESHAPE.*\[1, 468, 3\]"):
        rebatch(load_tflite(model_file("face_landmark_with_attention")), 2)


def test_rebatch_of_one_keeps_the_shapes():
    graph = load_tflite(model_file("face_landmark"))
    again = rebatch(graph, 1)
    assert [t.shape for t in again.tensors] == [t.shape for t in graph.tensors]
