"""Where the fetched models and sample media live, and how a test asks for one."""

from __future__ import annotations

from pathlib import Path

from engine.catalog.paths import assets_dir, models_dir
from tests.helpers.ci import missing

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = models_dir()
ASSETS_DIR = assets_dir()
CORE_MODELS = ("face_detection_short_range", "selfie_segmentation", "face_landmark")


def fetched_models() -> list[Path]:
    """Every .tflite the fetch step put in models/ (sorted, stable test ids)."""
    return sorted(MODELS_DIR.glob("*.tflite"))


def model_file(name: str) -> Path:
    path = MODELS_DIR / f"{name}.tflite"
    if not path.exists():
        missing(f"{path} not fetched: run `make models`")
    return path
