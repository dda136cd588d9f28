"""The model manifest: which .tflite files we fetch, from where, and how to read them.

Most come from the PyPI wheel mediapipe==0.10.14; the ones its Python API downloads at run
time from Google's storage (pose_landmark_lite / _heavy) come from the npm registry's
@mediapipe/pose package, whose pose_landmark_full.tflite is byte-identical to the wheel's
(`npm`: the package of an entry, `npm_packages`: each package's tarball and its sha256).

- input: models/manifest.json (committed; one entry per model, see docs/models.md; in a
  wheel engine/catalog/manifest.json, engine/catalog/paths.py)
- output: `ModelEntry` dataclasses, looked up by name
- usage: `model_path("face_detection_short_range")` -> <models dir>/face_detection_short_range.tflite
- `differs_from_published(path, data)`: a file named like a manifest model whose bytes are
  not the published ones (sha256), said in one line; the importer warns with it
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.catalog.paths import manifest_path, models_dir


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    meaning: str = ""


@dataclass(frozen=True)
class ModelEntry:
    name: str
    file: str  # file name inside the models folder
    wheel_path: str  # path of the file inside the mediapipe wheel, or the npm tarball
    sha256: str
    size: int
    core: bool
    task: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    preprocess: dict[str, Any]  # color, range [lo, hi], fit (letterbox|stretch|roi), detail
    custom_ops: tuple[str, ...] = ()
    postprocess: dict[str, Any] = field(default_factory=dict)  # SSD anchors/decode/NMS options
    source: str = ""
    npm: str = ""  # the npm package it comes from ("" : the mediapipe wheel)

    @property
    def path(self) -> Path:
        return models_dir() / self.file

    @property
    def input_range(self) -> tuple[float, float]:
        lo, hi = self.preprocess["range"]
        return float(lo), float(hi)


@dataclass(frozen=True)
class NpmPackage:
    """An npm package pinned by its tarball's sha256."""

    name: str  # "@mediapipe/pose"
    version: str
    tarball: str  # the registry's URL
    sha256: str


@dataclass(frozen=True)
class Manifest:
    package: str  # "mediapipe"
    version: str  # "0.10.14"
    fallback_platform: str
    fallback_python_version: str
    models: tuple[ModelEntry, ...]
    npm_packages: dict[str, NpmPackage] = field(default_factory=dict)

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    def get(self, name: str) -> ModelEntry:
        for entry in self.models:
            if entry.name == name:
                return entry
        known = ", ".join(e.name for e in self.models)
        raise KeyError(f"no model named {name!r} in the manifest (known: {known})")


def _tensor(d: dict[str, Any]) -> TensorSpec:
    return TensorSpec(d["name"], tuple(d["shape"]), d.get("dtype", "float32"), d.get("meaning", ""))


def _entry(d: dict[str, Any]) -> ModelEntry:
    return ModelEntry(
        name=d["name"],
        file=d["file"],
        wheel_path=d["wheel_path"],
        sha256=d["sha256"],
        size=int(d["size"]),
        core=bool(d.get("core", False)),
        task=d.get("task", ""),
        inputs=tuple(_tensor(t) for t in d["inputs"]),
        outputs=tuple(_tensor(t) for t in d["outputs"]),
        preprocess=dict(d["preprocess"]),
        custom_ops=tuple(d.get("custom_ops", ())),
        postprocess=dict(d.get("postprocess", {})),
        source=d.get("source", ""),
        npm=d.get("npm", ""),
    )


def parse_manifest(doc: dict[str, Any]) -> Manifest:
    """Build a Manifest from the decoded JSON document."""
    pkg = doc["package"]
    return Manifest(
        package=pkg["name"],
        version=pkg["version"],
        fallback_platform=pkg.get("fallback_platform", "manylinux2014_x86_64"),
        fallback_python_version=pkg.get("fallback_python_version", "311"),
        models=tuple(_entry(m) for m in doc["models"]),
        npm_packages={name: NpmPackage(name, p["version"], p["tarball"], p["sha256"])
                      for name, p in doc.get("npm_packages", {}).items()},
    )  # fmt: skip


@lru_cache(maxsize=4)
def load_manifest(path: Path | None = None) -> Manifest:
    """Read and parse the manifest (default: engine/catalog/paths.manifest_path(); cached)."""
    with open(path or manifest_path(), encoding="utf-8") as f:
        return parse_manifest(json.load(f))


def model_entry(name: str) -> ModelEntry:
    """The manifest entry called `name` (KeyError naming the known models otherwise)."""
    return load_manifest().get(name)


def model_path(name: str) -> Path:
    """Where the fetched .tflite file for `name` lives (it may not be fetched yet)."""
    return model_entry(name).path


def differs_from_published(path: str | Path, data: bytes) -> str | None:
    """One line saying that `data`, the bytes of `path`, differ from the published model
    of that file name (size, then sha256); None when they are the same or the manifest
    has no model of that name (or cannot be read)."""
    name = Path(path).name
    try:
        entries = [e for e in load_manifest().models if e.file == name]
    except (OSError, ValueError, KeyError):  # no manifest here: nothing to compare with
        return None
    if not entries:
        return None
    entry = entries[0]
    manifest = load_manifest()
    origin = f"{entry.npm}@{manifest.npm_packages[entry.npm].version}" if entry.npm else \
        manifest.requirement  # fmt: skip
    if len(data) == entry.size:
        digest = hashlib.sha256(data).hexdigest()
        if digest == entry.sha256:
            return None
        what = f"sha256 {digest[:12]}..., published {entry.sha256[:12]}..."
    else:
        what = f"{len(data):,} bytes, published {entry.size:,}"
    return (
        f"{path}: differs from the published {entry.name} ({what}; {entry.wheel_path} in "
        f"{origin}): its outputs may differ from the published model's"
    )
