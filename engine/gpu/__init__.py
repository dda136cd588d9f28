"""The WebGPU engine's public face: what engine.vision, the app and other programs use.

    from engine.gpu import Engine, shared_context
    engine = Engine.from_tflite("models/face_landmark.tflite", context=shared_context())

- the engine: `Engine` (engine.py: compile once, then `run` / `encode` / `profile`);
- the device: `shared_context` (one adapter + device per process), `GpuContext`,
  `compute_pipeline` (the context's pipeline cache), `device_guard`, `is_device_lost`,
  `adapter_class` (the adapter facts every default is chosen from);
- options and their defaults: `KERNEL_SETS`, `STORAGE_OPTIONS` / `resolve_storage`,
  `SYNC_MODES` / `check_sync`, `check_planners`;
- waiting and timing: `Fence`, `wait_mapped`, `MAP_READ_SUBMITTED`, `GpuMarks` (timestamp
  queries);
- start-up: `warm_up`, `scratch_context`, `compiles_late_with_cache`, `Progress` and
  `report_to` (compile progress);
- shaders: `render` (a WGSL template), `render_shader` and `Binding` (a template with the
  declarations of its bindings, generated from one Binding tuple), `register_shaders` /
  `shader_loader` (another package's template namespace);
- stages outside the engine (the vision stages, the app's effects): `bind_group` (from a
  Binding tuple), `zeros_buffer`, `dispatch`, `wgsl_float`, `Readback` (small results, one
  map a frame), `QueueCounts` (submits and blocking reads), `release_engine`, and frames:
  `FrameInput` (a numpy frame -> a texture), `check_image`, `is_texture`.

The names resolve lazily (a module-level __getattr__), so importing one light module of
engine.gpu (the compile step, the kernels) does not load wgpu. The modules behind them are
the engine's internals: the app imports only the names listed here (tests/test_layout.py).
"""

from __future__ import annotations

import importlib

# public name -> the module that defines it (one line per name: the whole public face)
_PUBLIC = {
    "Engine": "engine.gpu.engine",
    "GpuContext": "engine.gpu.device",
    "shared_context": "engine.gpu.device",
    "compute_pipeline": "engine.gpu.device",
    "device_guard": "engine.gpu.device",
    "is_device_lost": "engine.gpu.device",
    "adapter_class": "engine.gpu.adapters",
    "KERNEL_SETS": "engine.gpu.compile",
    "KERNEL_MODES": "engine.gpu.staged",
    "STAGED": "engine.gpu.staged",
    "STAGED_SETS": "engine.gpu.staged",
    "BackgroundBuild": "engine.gpu.background",
    "check_planners": "engine.gpu.compile",
    "STORAGE_OPTIONS": "engine.gpu.storage_choice",
    "resolve_storage": "engine.gpu.storage_choice",
    "SYNC_MODES": "engine.gpu.sync",
    "check_sync": "engine.gpu.sync",
    "Fence": "engine.gpu.sync",
    "wait_mapped": "engine.gpu.sync",
    "MAP_READ_SUBMITTED": "engine.gpu.sync",
    "GpuMarks": "engine.gpu.timestamps",
    "warm_up": "engine.gpu.warmup",
    "scratch_context": "engine.gpu.warmup",
    "compiles_late_with_cache": "engine.gpu.warmup",
    "Progress": "engine.gpu.progress",
    "report_to": "engine.gpu.progress",
    "render": "engine.gpu.codegen",
    "render_shader": "engine.gpu.kernels.base",
    "Binding": "engine.gpu.kernels.base",
    "register_shaders": "engine.gpu.codegen",
    "shader_loader": "engine.gpu.codegen",
    "bind_group": "engine.gpu.stages",
    "zeros_buffer": "engine.gpu.stages",
    "dispatch": "engine.gpu.stages",
    "wgsl_float": "engine.gpu.stages",
    "QueueCounts": "engine.gpu.stages",
    "release_engine": "engine.gpu.stages",
    "Readback": "engine.gpu.readback",
    "FrameInput": "engine.gpu.frames",
    "check_image": "engine.gpu.frames",
    "is_texture": "engine.gpu.frames",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'engine.gpu' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
