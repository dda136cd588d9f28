"""Per-adapter disk caches: one JSON file per (kind of fact, adapter).

Only opt-in measurements are cached here (tuned work groups, the measured storage kind);
defaults never read a cache, so the same model on the same adapter gets the same choices
on every machine.

- where: `<root>/<kind>/<adapter hash>.json`; root = ENGINE_CACHE_DIR (engine/config.py),
  else the user cache dir of webgpu-ar (or a folder the caller gives);
- key: `AdapterKey` (vendor, device, driver description, backend) names the file;
- versioned: a file of another version, or one that is not a JSON object, is ignored
  with a warning naming it (and replaced on the next write); writes go to a temporary
  file renamed over the old one (atomic), and an unwritable folder is a warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.config import settings


@dataclass(frozen=True)
class AdapterKey:
    """What identifies an adapter and its driver for cached measurements."""

    vendor: str
    device: str
    driver: str
    backend: str

    @classmethod
    def from_info(cls, info: dict) -> AdapterKey:
        """From wgpu-py's `adapter.info` (the description carries the driver version)."""
        return cls(
            vendor=str(info.get("vendor", "")),
            device=str(info.get("device", "")),
            driver=str(info.get("description", "")),
            backend=str(info.get("backend_type", "")),
        )

    def file_name(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16] + ".json"


def cache_root(directory: str | os.PathLike | None = None) -> Path:
    """The caches' root folder: `directory` when given, else see the module docstring."""
    if directory is not None:
        return Path(directory)
    if settings().cache_dir is not None:
        return settings().cache_dir
    from engine.catalog.paths import user_cache_dir

    return user_cache_dir()


class AdapterFile:
    """The JSON document of one kind of fact for one adapter: {"version", "adapter", ...}."""

    def __init__(self, kind: str, adapter: AdapterKey, version: int,
                 folder: str | os.PathLike | None = None, required: str | None = None):  # fmt: skip
        """`folder`: where the kind's files go (default `cache_root() / kind`); `required`:
        a field that must hold a JSON object for the file to count."""
        self.kind, self.adapter, self.version, self.required = kind, adapter, version, required
        folder = Path(folder) if folder is not None else cache_root() / kind
        self.path = folder / adapter.file_name()

    def load(self, warn: bool = True) -> dict:
        """The document's fields besides version/adapter; {} when absent, foreign or corrupt
        (with a warning naming the file unless `warn` is False)."""

        def ignore(why: str) -> dict:
            if warn:
                warnings.warn(f"ignoring {self.kind} cache {self.path}: {why}", stacklevel=3)
            return {}

        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except OSError as exc:
            return ignore(f"unreadable ({exc})")
        except ValueError as exc:
            return ignore(f"corrupt ({exc})")
        needed = self.required
        if not isinstance(data, dict) or (needed and not isinstance(data.get(needed), dict)):
            return ignore(f"corrupt (no {needed} object)" if needed else "corrupt (not an object)")
        if data.get("version") != self.version:
            return ignore(f"version {data.get('version')!r}, this engine reads {self.version}")
        return {k: v for k, v in data.items() if k not in ("version", "adapter")}

    def save(self, fields: dict) -> None:
        """Write `fields` (atomic rename); a warning when the folder is not writable."""
        data = {"version": self.version, "adapter": asdict(self.adapter), **fields}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump(data, f, indent=1, sort_keys=True)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            warnings.warn(f"cannot write {self.kind} cache {self.path}: {exc}", stacklevel=2)
