"""Which effect a set of models makes (no GPU)."""

from __future__ import annotations

import pytest

from app.errors import AppError
from app.models import ModelSpec, choose_effect, load_model, model_role
from tests.helpers.files import model_file


def test_roles_from_output_shapes():
    assert model_role({"activation_10": (1, 256, 256, 1)}) == "segmentation"
    assert model_role({"regressors": (1, 896, 16), "classificators": (1, 896, 1)}) == "detection"
    assert model_role({"conv2d_21": (1, 1, 1, 1404), "conv2d_31": (1, 1, 1, 1)}) == "landmarks"
    assert model_role({"out": (1, 213), "iris": (1, 15)}) is None
    hand = {"Identity": (1, 63), "Identity_1": (1, 1), "Identity_2": (1, 1), "Identity_3": (1, 63)}
    assert model_role(hand) == "hand_landmarks"
    pose = {"Identity": (1, 195), "Identity_1": (1, 1), "Identity_2": (1, 256, 256, 1),
            "Identity_3": (1, 64, 64, 39), "Identity_4": (1, 117)}  # fmt: skip
    assert model_role(pose) == "pose_landmarks"
    assert model_role({"Identity": (1, 2016, 18), "Identity_1": (1, 2016, 1)}) == "detection"


@pytest.mark.parametrize("solution", ["hands", "pose", "face-mesh", "face-detection",
                                      "selfie-segmentation"])  # fmt: skip
def test_each_solution_runs_its_effect_on_the_manifests_models(solution):
    """--solution NAME: the manifest's files, recognised as the roles its effect needs."""
    from app.effects import SOLUTION_EFFECTS
    from app.models import solution_models

    paths = solution_models(solution)
    for path in paths:
        model_file(__import__("pathlib").Path(path).stem)  # skips when not fetched
    specs = [load_model(p) for p in paths]
    assert choose_effect(specs) == SOLUTION_EFFECTS[solution].name


def _spec(role):
    return ModelSpec(path=__import__("pathlib").Path(f"{role}.tflite"), graph=None, role=role,
                     input_name="x", value_range=(0.0, 1.0), fit="stretch")  # fmt: skip


def test_auto_picks_the_effect():
    assert choose_effect([_spec("segmentation")]) == "segmentation"
    assert choose_effect([_spec("detection")]) == "face-detection"
    assert choose_effect([_spec("detection"), _spec("landmarks")]) == "face-mesh"
    assert choose_effect([_spec("detection"), _spec("hand_landmarks")]) == "hands"
    assert choose_effect([_spec("pose_landmarks"), _spec("detection")]) == "pose"
    assert choose_effect([_spec("landmarks"), _spec("detection")], "face-detection") == (
        "face-detection"
    )


def test_no_fit_suggests_effect():
    with pytest.raises(AppError, match="--effect"):
        choose_effect([_spec(None)])
    with pytest.raises(AppError, match="needs a detection"):
        choose_effect([_spec("segmentation")], "face-mesh")
    with pytest.raises(AppError, match="face detector"):
        choose_effect([_spec("landmarks")])


def test_manifest_gives_range_and_fit():
    det = load_model(model_file("face_detection_short_range"))
    assert (det.role, det.value_range, det.fit) == ("detection", (-1.0, 1.0), "letterbox")
    seg = load_model(model_file("selfie_segmentation"))
    assert (seg.role, seg.value_range, seg.fit, seg.input_name) == (
        "segmentation", (0.0, 1.0), "stretch", "input_1",
    )  # fmt: skip


def test_effect_registry_names_its_classes():
    from app.effects import EFFECTS, effect_class
    from app.options import build_parser

    for name, info in EFFECTS.items():
        cls = effect_class(name)
        assert cls.name == name and cls.styles == info.styles
    effect_action = next(a for a in build_parser()._actions if a.dest == "effect")
    assert tuple(effect_action.choices) == ("auto", *EFFECTS)


def test_an_altered_published_model_is_one_warning_line(tmp_path, capsys, monkeypatch):
    """A file named like a manifest model with other bytes loads (the manifest's reading
    of it still applies) and ar-demo says so in one line on stderr."""
    from engine.model import importer

    monkeypatch.setattr(importer, "_WARNED", set())
    data = bytearray(model_file("selfie_segmentation").read_bytes())
    data[-64] ^= 0x01
    path = tmp_path / "selfie_segmentation.tflite"
    path.write_bytes(bytes(data))
    spec = load_model(path)
    assert spec.role == "segmentation"
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"ar-demo: warning: {path}: differs from the")


def test_a_corrupt_model_is_one_app_error(tmp_path):
    data = model_file("selfie_segmentation").read_bytes()
    path = tmp_path / "broken.tflite"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(AppError) as err:
        load_model(path)
    assert (
        str(err.value).startswith(f"{path}: ") and str(path) not in str(err.value)[len(str(path)) :]
    )
