"""Every environment knob of the engine, parsed in one place (tinygrad's helpers.py idea).

    from engine.config import settings
    if settings().debug >= 2: ...

`settings()` reads the environment once per process and caches the result; a malformed
value is a ValueError naming the variable. Tests that change the environment call
`reload()`. `KNOBS` is the one list of variables: `engine-inspect --env` prints it and
docs/architecture.md shows it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class Knob:
    env: str  # the environment variable
    field: str  # the Settings attribute
    parse: Callable[[str], object]
    help: str


def _level(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError("an integer level 0-3")
    return int(text)


def _positive(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError("a positive integer")
    return int(text)


def _storage(text: str) -> str:
    kind = text.strip().lower()
    if kind not in ("buffer", "texture"):
        raise ValueError("'buffer' or 'texture'")
    return kind


def _flag(text: str) -> bool:
    if text.strip() not in ("0", "1"):
        raise ValueError("0 or 1")
    return text.strip() == "1"


def _path(text: str) -> Path:
    return Path(text).expanduser()


KNOBS = (
    Knob("ENGINE_DEBUG", "debug", _level,
         "1: transform log, dispatches, pipelines, memory plan, init split; 2: + the "
         "transformed graph; 3: + the WGSL of every pipeline"),
    Knob("ENGINE_ADAPTER", "adapter", str.strip,
         "default adapter: a substring of its vendor/device/description/backend"),
    Knob("ENGINE_STORAGE", "storage", _storage,
         "force the storage kind of intermediate tensors ('buffer' or 'texture') for "
         "storage='auto'"),
    Knob("ENGINE_CACHE_DIR", "cache_dir", _path,
         "root of the per-adapter caches (tuned work groups, measured storage kind); "
         "default: the user cache dir of webgpu-ar"),
    Knob("ENGINE_COMPILE_THREADS", "compile_threads", _positive,
         "threads that compile pipelines (default: usable CPUs, at most 8)"),
    Knob("ENGINE_DATA_DIR", "data_dir", _path,
         "where models/ and assets/ live (default: the source checkout, else the user "
         "cache dir of webgpu-ar)"),
    Knob("ENGINE_BENCH_ONNX_PYTHON", "onnx_python", _path,
         "engine-bench: a Python with onnxruntime + tflite2onnx for the ONNX peer"),
    Knob("ENGINE_LATENCY_CACHE", "latency_cache", _flag,
         "engine-latency predict: 0 turns off the per-file cache of dispatch lists"),
)  # fmt: skip


@dataclass(frozen=True)
class Settings:
    debug: int = 0
    adapter: str | None = None
    storage: str | None = None
    cache_dir: Path | None = None
    compile_threads: int | None = None
    data_dir: Path | None = None
    onnx_python: Path | None = None
    latency_cache: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        values = {}
        for knob in KNOBS:
            text = environ.get(knob.env, "")
            if not text.strip():
                continue
            try:
                values[knob.field] = knob.parse(text)
            except ValueError as exc:
                raise ValueError(f"{knob.env}={text!r}: expected {exc}") from None
        return cls(**values)


@cache
def settings() -> Settings:
    """The process's settings, from os.environ (read once)."""
    return Settings.from_env(os.environ)


def reload() -> Settings:
    """Read the environment again (tests that change it)."""
    settings.cache_clear()
    return settings()
