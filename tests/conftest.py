"""Shared fixtures: where the fetched models and sample media live."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# The engine's disk caches (tuned work groups, the heuristic memo, compiled templates) go
# to a fresh folder per test session: tests see what a new machine sees and never write
# into the user's cache. Set before any engine module reads its settings.
os.environ.setdefault("ENGINE_CACHE_DIR", tempfile.mkdtemp(prefix="webgpu-ar-test-cache-"))

from engine.catalog.paths import assets_dir, models_dir

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = models_dir()
ASSETS_DIR = assets_dir()
CORE_MODELS = ("face_detection_short_range", "selfie_segmentation", "face_landmark")


@pytest.fixture(autouse=True)
def _fresh_settings():
    """Each test sees the environment as it is (engine/config.py reads it once)."""
    from engine import config

    yield
    config.reload()


def fetched_models() -> list[Path]:
    """Every .tflite the fetch step put in models/ (sorted, stable test ids)."""
    return sorted(MODELS_DIR.glob("*.tflite"))


def model_file(name: str) -> Path:
    path = MODELS_DIR / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} not fetched: run `make models`")
    return path


@pytest.fixture(scope="session")
def astronaut_rgb():
    """The astronaut still as an RGB uint8 array (HxWx3)."""
    import cv2

    path = ASSETS_DIR / "astronaut.png"
    if not path.exists():
        pytest.skip(f"{path} missing: run `make assets`")
    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    return bgr[:, :, ::-1].copy()
