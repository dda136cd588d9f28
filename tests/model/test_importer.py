"""Importer and writer: round trips on every fetched model, LiteRT equivalence, bad files."""

from __future__ import annotations

import numpy as np
import pytest

from engine import ModelError
from engine.model.importer import load_tflite
from engine.model.ir import graphs_equal
from engine.model.writer import write_tflite
from tests.helpers.files import fetched_models, model_file

MODELS = fetched_models()
MODEL_IDS = [p.stem for p in MODELS]


@pytest.mark.parametrize("path", MODELS, ids=MODEL_IDS)
def test_round_trip_gives_same_ir(path):
    graph = load_tflite(path)
    again = load_tflite(write_tflite(graph))
    assert graphs_equal(graph, again) == []


@pytest.mark.parametrize("path", MODELS, ids=MODEL_IDS)
def test_import_folds_dequantize_and_densify(path):
    graph = load_tflite(path)
    assert not {"DEQUANTIZE", "DENSIFY"} & {op.type for op in graph.ops}
    for op in graph.ops:
        for t in op.inputs:
            tensor = graph.tensors[t] if t >= 0 else None
            if tensor is not None and tensor.is_constant and tensor.dtype.startswith("float"):
                assert tensor.dtype == "float32", f"{tensor.name} kept {tensor.dtype}"


def _litert_outputs(model, feeds):
    from ai_edge_litert.interpreter import Interpreter

    interp = (
        Interpreter(model_path=str(model))
        if not isinstance(model, bytes)
        else Interpreter(model_content=model)
    )
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), feeds, strict=True):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


@pytest.mark.parametrize(
    "name", ["face_detection_short_range", "face_detection_full_range_sparse", "face_landmark"]
)
def test_written_model_runs_the_same_on_litert(name):
    """The written file (DEQUANTIZE/DENSIFY folded, weights densified by us) is the same network."""
    pytest.importorskip("ai_edge_litert")
    path = model_file(name)
    graph = load_tflite(path)
    rng = np.random.default_rng(0)
    feeds = [rng.random(graph.tensors[i].shape, dtype=np.float32) for i in graph.inputs]
    want = _litert_outputs(path, feeds)
    got = _litert_outputs(write_tflite(graph), feeds)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_core_model_attributes():
    graph = load_tflite(model_file("face_detection_short_range"))
    first = graph.ops[0]
    assert first.type == "CONV_2D"
    assert first.attrs["padding"] == "SAME" and first.attrs["stride_w"] == 2
    assert graph.tensors[graph.inputs[0]].shape == (1, 128, 128, 3)
    assert [graph.tensors[i].name for i in graph.outputs] == ["regressors", "classificators"]


def test_custom_transpose_conv_is_decoded():
    graph = load_tflite(model_file("selfie_segmentation"))
    (op,) = [op for op in graph.ops if op.custom]
    assert op.type == "Convolution2DTransposeBias"
    assert op.attrs == {"padding": "SAME", "stride_w": 2, "stride_h": 2}
    assert graph.tensors[op.inputs[1]].shape == (1, 2, 2, 16)  # [out, kH, kW, in]


def test_mediapipe_landmark_ops_are_decoded():
    # face_landmark_with_attention's sub-crops: lips, left eye, right eye (spec: the
    # flexbuffer options of mediapipe/util/tflite/operations/*.cc, version 2)
    graph = load_tflite(model_file("face_landmark_with_attention"))
    custom = [op for op in graph.ops if op.custom]
    matrices = [op.attrs for op in custom if op.type == "Landmarks2TransformMatrix"]
    assert [(a["left_rotation_idx"], a["right_rotation_idx"], len(a["subset_idxs"]))
            for a in matrices] == [(61, 291, 80), (33, 133, 71), (362, 263, 71)]  # fmt: skip
    for a in matrices:
        sub_crop = (a["output_height"], a["output_width"], a["scale_x"], a["scale_y"])
        assert sub_crop == (16, 16, 1.5, 1.5) and a["target_rotation_radians"] == 0.0
    bilinear = [op.attrs for op in custom if op.type == "TransformTensorBilinear"]
    assert bilinear == [{"output_height": 16, "output_width": 16}] * 3
    assert [op.attrs for op in custom if op.type == "TransformLandmarks"] == [{}] * 5


def test_another_version_of_a_mediapipe_op_is_refused(monkeypatch):
    # Version 1 of TransformTensorBilinear has no half-pixel correction: another op
    from dataclasses import replace

    from engine.model import writer
    from engine.model.op_specs import SPECS

    graph = load_tflite(model_file("face_landmark_with_attention"))
    v1 = replace(SPECS["TransformTensorBilinear"], version=1)
    monkeypatch.setattr(writer, "SPECS", {**SPECS, "TransformTensorBilinear": v1})
    with pytest.raises(ModelError, match="TransformTensorBilinear is version 1; the engine"):
        load_tflite(write_tflite(graph))


def test_bad_flexbuffer_options_raise_model_error():
    from flatbuffers import flexbuffers

    from engine.model.ir import Op

    graph = load_tflite(model_file("face_landmark_with_attention"))
    i = next(k for k, op in enumerate(graph.ops) if op.type == "TransformTensorBilinear")
    op = graph.ops[i]
    bad = bytes(flexbuffers.Dumps({"output_height": 1.5, "output_width": 16}))
    graph.ops[i] = Op(op.type, op.inputs, op.outputs, {}, True, bad)
    with pytest.raises(ModelError, match="TransformTensorBilinear option output_height is not"):
        load_tflite(write_tflite(graph))


# --- bad files -----------------------------------------------------------------------


def _bad_files(good: bytes) -> dict[str, bytes]:
    import flatbuffers

    other = flatbuffers.Builder(64)  # a valid flatbuffer of another schema
    other.StartObject(1)
    other.PrependInt32Slot(0, 7, 0)
    other.Finish(other.EndObject(), file_identifier=b"ABCD")
    cases = {
        "empty": b"",
        "tiny": b"TF",
        "random": np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes(),
        "other_schema": bytes(other.Output()),
        "text": b"this is not a model\n" * 10,
    }
    for frac in (0.01, 0.1, 0.5, 0.9, 0.999):
        cases[f"truncated_{frac}"] = good[: int(len(good) * frac)]
    return cases


@pytest.mark.parametrize(
    "case",
    ["empty", "tiny", "random", "other_schema", "text"]
    + [f"truncated_{f}" for f in (0.01, 0.1, 0.5, 0.9, 0.999)],
)
def test_bad_files_raise_model_error(case, tmp_path):
    good = model_file("face_detection_short_range").read_bytes()
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(_bad_files(good)[case])
    with pytest.raises(ModelError) as err:
        load_tflite(path)
    assert str(path) in str(err.value)


def test_missing_file_raises_model_error(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        load_tflite(tmp_path / "nope.tflite")
