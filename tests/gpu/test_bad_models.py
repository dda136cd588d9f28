"""A bad model through the whole engine (import, compile, run on the adapter) is a one-line
ModelError naming the file and the op or tensor; never another exception."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Engine
from engine.errors import ModelError
from engine.model.ir import Graph, Op, Tensor
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

gpu_context()  # skips the module without an adapter


def test_cpu_fallback_output_of_another_shape():
    """PACK runs on the CPU (no GPU kernel); a declared output that is not what it makes
    (a hand-built graph skips the importer's checks) is named before anything is written."""
    tensors = [
        Tensor("a", (1, 4, 2), "float32"),
        Tensor("b", (1, 4, 2), "float32"),
        Tensor("p", (2, 1, 4, 3), "float32"),  # PACK of 2 makes [2, 1, 4, 2]
    ]
    g = Graph(tensors, [Op("PACK", (0, 1), (2,), {"axis": 0, "values_count": 2})], [0, 1], [2],
              name="pack.tflite")  # fmt: skip
    engine = Engine(g)
    assert engine.fallback_ops == ["#0 PACK"]
    x = np.zeros((1, 4, 2), np.float32)
    with pytest.raises(ModelError) as err:
        engine.run([x, x])
    assert str(err.value) == (
        "pack.tflite: op #0 PACK (CPU fallback): output 'p' is declared [2, 1, 4, 3], "
        "the op made [2, 1, 4, 2]"
    )


def test_corrupt_dimension_of_a_core_model(tmp_path):
    """A weight shape set to 65536: the importer names the op and the shapes."""
    from benchmarks.fuzz.child import run_one

    data = bytearray(model_file("face_landmark").read_bytes())
    from benchmarks.fuzz.mutate import find_slots

    slot = next(s for s in find_slots(bytes(data)) if s.kind == "dim" and "Kernel" in s.label)
    data[slot.pos : slot.pos + 4] = (65536).to_bytes(4, "little")
    path = tmp_path / "face_landmark_bad.tflite"
    path.write_bytes(bytes(data))
    outcome, stage, exc = run_one(path)
    assert (outcome, stage) == ("model_error", "import"), exc
    assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
