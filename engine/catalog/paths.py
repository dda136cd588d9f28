"""Where the data lives: the fetched models, the sample media, the manifest.

- source checkout (the repo's `models/` and `assets/` beside `engine/`): there;
- installed wheel: `<user cache dir of webgpu-ar>/models` and `/assets`;
- ENGINE_DATA_DIR (engine/config.py) overrides both: `$ENGINE_DATA_DIR/models`, `/assets`.
The clips the fidelity references were made from are kept in a checkout's
tests/data/mediapipe/ (kept_clip): a render of them differs between CPUs.
The manifest (which files, their checksums, how to read them) is the repo's
`models/manifest.json`, shipped in the wheel as `engine/catalog/manifest.json`.
"""

from __future__ import annotations

from pathlib import Path

from engine.config import settings

APP_NAME = "webgpu-ar"
_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO = _PACKAGE_DIR.parents[1]


def source_checkout() -> Path | None:
    """The repo root when running from a source checkout (editable install), else None."""
    if (_REPO / "models" / "manifest.json").is_file() and (_REPO / "shaders").is_dir():
        return _REPO
    return None


def kept_clip(name: str) -> Path | None:
    """tests/data/mediapipe/`name` of the source checkout, None outside one or when absent."""
    repo = source_checkout()
    path = repo / "tests" / "data" / "mediapipe" / name if repo else None
    return path if path is not None and path.is_file() else None


def user_cache_dir() -> Path:
    """The per-user cache folder of the project (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))


def data_root() -> Path:
    """The folder holding models/ and assets/ (see the module docstring)."""
    configured = settings().data_dir
    if configured is not None:
        return configured
    return source_checkout() or user_cache_dir()


def models_dir() -> Path:
    return data_root() / "models"


def assets_dir() -> Path:
    return data_root() / "assets"


def manifest_path() -> Path:
    repo = source_checkout()
    return repo / "models" / "manifest.json" if repo else _PACKAGE_DIR / "manifest.json"
