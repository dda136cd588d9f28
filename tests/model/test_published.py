"""A file named like a published model (models/manifest.json) but with other bytes still
imports, with one PublishedModelWarning per file: one line naming the file and saying it
differs from the published model. The published file itself and other names: none."""

from __future__ import annotations

import shutil
import warnings

import pytest

from engine.catalog.manifest import differs_from_published
from engine.errors import PublishedModelWarning
from engine.model import importer
from tests.helpers.files import model_file


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch):
    monkeypatch.setattr(importer, "_WARNED", set())


def _load(path) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importer.load_tflite(path)
    return [w for w in caught if issubclass(w.category, PublishedModelWarning)]


def test_the_published_file_does_not_warn():
    assert _load(model_file("face_detection_short_range")) == []


def test_an_altered_copy_warns_once(tmp_path):
    data = bytearray(model_file("face_detection_short_range").read_bytes())
    data[-100] ^= 0x40  # a weight byte: the model still imports and runs
    path = tmp_path / "face_detection_short_range.tflite"
    path.write_bytes(bytes(data))
    first = _load(path)
    assert len(first) == 1
    message = str(first[0].message)
    assert message.startswith(
        f"{path}: differs from the published face_detection_short_range (sha256 "
    )
    assert "mediapipe==" in message and "\n" not in message
    assert _load(path) == []  # once per file


def test_another_size_is_said_without_hashing(tmp_path):
    path = tmp_path / "face_landmark.tflite"
    shutil.copy(model_file("face_landmark"), path)
    with open(path, "ab") as f:
        f.write(b"\0" * 16)
    why = differs_from_published(path, path.read_bytes())
    assert why is not None and "bytes, published" in why


def test_an_unknown_name_is_not_compared(tmp_path):
    path = tmp_path / "my_model.tflite"
    shutil.copy(model_file("face_landmark"), path)
    assert _load(path) == []
