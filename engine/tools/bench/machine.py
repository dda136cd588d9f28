"""What a benchmark ran on: adapter, CPU, Python and library versions."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cpus() -> int:
    """CPUs this process may run on (affinity), else os.cpu_count()."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine_info(ctx=None) -> dict:
    """Plain-data description of the machine; `ctx` is the engine's GpuContext if any."""
    info = {
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable_cpus(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": {
            d: _version(d) for d in ("numpy", "wgpu", "ai-edge-litert", "tflite", "onnxruntime")
        },
    }
    if ctx is not None:
        info["adapter"] = ctx.name
        info["adapter_info"] = {k: str(v) for k, v in ctx.info.items()}
        from engine.gpu.device import OPTIONAL_FEATURES

        info["adapter_features"] = {f: f in ctx.features for f in OPTIONAL_FEATURES}
    return info
