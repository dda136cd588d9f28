"""What the adapter allows and what the rules need to know about it.

`DeviceLimits.from_wgpu(limits, info)` reads wgpu-py's `adapter.limits` /
`device.limits` and `adapter.info` dicts:
- sizes: the max-compute-* limits (WebGPU's defaults when a key is missing);
- subgroup size: info's subgroup_min_size/subgroup_max_size (wgpu-py 0.32 spells
  them stackgroup_* and always reports the spec's placeholder bounds 4..128,
  which say nothing); unknown -> 32, as most GPUs run 32- or 64-wide waves;
- parallel units: not exposed by WebGPU; for a CPU adapter a fixed CPU_PARALLEL_UNITS
  (or the thread count the user gave llvmpipe in LP_NUM_THREADS), else None;
- a CPU adapter's subgroup is its SIMD width in 32-bit lanes: llvmpipe names its vector
  width in the device string ("llvmpipe (LLVM 15.0.6, 256 bits)" -> 8 lanes;
  LP_NATIVE_VECTOR_WIDTH overrides), SwiftShader runs 4 lanes; not the GPU default.
Only adapter facts and the driver's own settings count, never the machine the process
runs on: the same adapter gets the same choices on every machine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

SUBGROUP_DEFAULT = 32
PLACEHOLDER_SUBGROUPS = (4, 128)  # WebGPU spec bounds, reported when the driver does not say
# llvmpipe runs compute on LP_NUM_THREADS threads (default: the CPU count), capped by
# LP_MAX_THREADS = 32 (Mesa src/gallium/drivers/llvmpipe/lp_limits.h).
LLVMPIPE_MAX_THREADS = 32
# A CPU adapter's compute threads, as the rules see them when the user sets none: a fixed
# count, not the machine's, so choices do not vary between machines. On 2 cores, whole
# models with 2 / 4 / 8 / 16 units ran within 1.3% of each other (interleaved medians).
CPU_PARALLEL_UNITS = 8
# Lanes of CPU adapters that do not name their vector width: SwiftShader's SIMD::Width.
CPU_DEFAULT_LANES = 4


@dataclass(frozen=True)
class DeviceLimits:
    """Work group limits of one device; the defaults are WebGPU's guaranteed minimums."""

    max_invocations: int = 256
    max_size: tuple[int, int, int] = (256, 256, 64)
    max_groups: int = 65535  # work groups per dispatch dimension
    subgroup_min: int = SUBGROUP_DEFAULT
    subgroup_max: int = SUBGROUP_DEFAULT
    parallel_units: int | None = None

    def __post_init__(self) -> None:
        if min(self.max_invocations, self.max_groups, *self.max_size) < 1:
            raise ValueError(f"{self}: every limit must be >= 1")
        if not 1 <= self.subgroup_min <= self.subgroup_max:
            raise ValueError(f"{self}: need 1 <= subgroup_min <= subgroup_max")
        if self.parallel_units is not None and self.parallel_units < 1:
            raise ValueError(f"{self}: parallel_units must be >= 1 or None")

    @classmethod
    def from_wgpu(cls, limits: dict, info: dict, parallel_units: int | None = None) -> DeviceLimits:
        """From wgpu-py's limits and adapter info dicts; `parallel_units` overrides the guess."""

        def get(name: str, default: int) -> int:
            for key in (name, name.replace("-", "_")):
                if limits.get(key):
                    return int(limits[key])
            return default

        lo = info.get("subgroup_min_size", info.get("stackgroup_min_size"))
        hi = info.get("subgroup_max_size", info.get("stackgroup_max_size"))
        cpu = info.get("adapter_type") == "CPU"
        if not lo or not hi or (lo, hi) == PLACEHOLDER_SUBGROUPS or lo > hi:
            lo = hi = cpu_simd_lanes(str(info.get("device", ""))) if cpu else SUBGROUP_DEFAULT
        if parallel_units is None and cpu:
            parallel_units = cpu_threads()
        return cls(
            max_invocations=get("max-compute-invocations-per-workgroup", 256),
            max_size=(
                get("max-compute-workgroup-size-x", 256),
                get("max-compute-workgroup-size-y", 256),
                get("max-compute-workgroup-size-z", 64),
            ),
            max_groups=get("max-compute-workgroups-per-dimension", 65535),
            subgroup_min=int(lo),
            subgroup_max=int(hi),
            parallel_units=parallel_units,
        )


def cpu_threads() -> int:
    """Threads a CPU adapter runs compute on, as the rules see them: LP_NUM_THREADS when
    the user sets it (llvmpipe caps it at LLVMPIPE_MAX_THREADS), else CPU_PARALLEL_UNITS."""
    env = os.environ.get("LP_NUM_THREADS", "")
    threads = int(env) if env.isdigit() else CPU_PARALLEL_UNITS
    return max(1, min(threads, LLVMPIPE_MAX_THREADS))


def cpu_simd_lanes(device: str) -> int:
    """32-bit lanes a CPU adapter runs side by side: LP_NATIVE_VECTOR_WIDTH when set, else
    the "<N> bits" llvmpipe puts in its device name, else CPU_DEFAULT_LANES."""
    env = os.environ.get("LP_NATIVE_VECTOR_WIDTH", "")
    if env.isdigit() and int(env) >= 32:
        return int(env) // 32
    found = re.search(r"(\d+) bits", device)
    return int(found.group(1)) // 32 if found else CPU_DEFAULT_LANES
