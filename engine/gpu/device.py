"""One wgpu device that the engine and the app share.

- `GpuContext.create(adapter=...)` picks an adapter by a name/backend substring
  (argument, else the ENGINE_ADAPTER environment variable, else the best one:
  a real GPU before a CPU one, Vulkan/Metal/D3D12 before OpenGL); OpenGL's adapters
  are enumerated only when no other matches (`_enumerate`: its probing costs ~22 ms);
- the device is requested with the optional features the engine can use
  (shader-f16, timestamp-query, subgroup) and the adapter's own limits;
- before the first device, wgpu-py's header comes precompiled from the cache (wgpu_abi.py);
- no adapter at all -> DeviceError saying how to install a Vulkan driver;
- a lost device (driver reset, `device.destroy()`): `is_device_lost()` tells it from other
  errors, `device_guard()` turns it into DeviceLostError, and `shared_context()` replaces
  a lost context with a new device.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from engine.config import settings
from engine.errors import DeviceError, DeviceLostError
from engine.gpu import wgpu_abi

INSTALL_HINT = (
    "install a Vulkan driver: on Debian/Ubuntu `sudo apt-get install mesa-vulkan-drivers` "
    "(gives the lavapipe CPU adapter), or your GPU vendor's driver"
)
OPTIONAL_FEATURES = ("shader-f16", "timestamp-query", "subgroup")
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 2}
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3}


def _adapter_text(adapter) -> str:
    info = adapter.info
    return " ".join(
        str(info.get(k, ""))
        for k in ("vendor", "device", "description", "backend_type", "adapter_type")
    )


def _rank(adapter) -> tuple[int, int]:
    info = adapter.info
    return (
        _BACKEND_RANK.get(info.get("backend_type"), 1),
        _TYPE_RANK.get(info.get("adapter_type"), 2),
    )


def _quiet_mesa_runtime_dir() -> None:
    """Mesa's Vulkan drivers print "error: XDG_RUNTIME_DIR is invalid or not set" on every
    device when the variable is missing (CI, containers, ssh): give them a private one."""
    if os.environ.get("XDG_RUNTIME_DIR") or not hasattr(os, "getuid"):
        return
    path = os.path.join(tempfile.gettempdir(), f"runtime-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return
    os.environ["XDG_RUNTIME_DIR"] = path


def _matching(adapters: list, wanted: str | None) -> list:
    return [a for a in adapters if not wanted or wanted.lower() in _adapter_text(a).lower()]


# True while this process's wgpu instance is the one _enumerate made with the primary
# backends only (wgpu-py keeps one instance per process).
_primary_only = False


# The instance's flags: a release build's defaults (wgpu's InstanceFlags::from_build_config:
# VALIDATION_INDIRECT_CALL alone) without the indirect-call validation. With it wgpu-core
# checks each dispatch_workgroups_indirect's arguments by a compute pass of its own before
# the dispatch: 0.04-0.08 ms more per indirect dispatch on lavapipe, zero-sized or not
# (1,000 dispatches in one pass: 0.001 ms without it), and a gated model
# (engine/gpu/gate.py) dispatches every op indirectly: Hands' frame on webgpu ran 3.4 fps
# with it and 3.8-4.1 without (people clip, 60 frames). The arguments the engine writes
# are the model's own grids or 0 (shaders/engine/gate.wgsl), valid by construction.
INSTANCE_FLAGS = ["Empty"]


def _primary_backends_first() -> bool:
    """Make wgpu-py's instance with the primary backends only (Vulkan, Metal, D3D12);
    False when an instance exists already (the caller used wgpu first, or the engine
    did: it stays as it is) or wgpu-py offers no such setting."""
    try:
        from wgpu.backends.wgpu_native import _helpers, extras

        if _helpers._the_instance is not None:
            return False
        extras.set_instance_extras(backends=["Primary"], flags=INSTANCE_FLAGS)
        return True
    except Exception:
        return False


def _every_backend() -> None:
    """Replace the primary-only instance with one with every backend, OpenGL too
    (wgpu-py's own way: drop `_the_instance`, then make one). The old one is left
    alive, not released: devices made from it keep working."""
    from wgpu.backends.wgpu_native import _helpers, extras

    _helpers._the_instance = None
    extras.set_instance_extras(backends=["All"], flags=INSTANCE_FLAGS)


def _enumerate(wgpu, wanted: str | None) -> list:
    """The adapters to choose from. wgpu-py makes one instance per process, by default
    with every backend; probing OpenGL (EGL) costs ~22 ms of every start on SwiftShader
    (~5 on lavapipe), and its adapters rank last. So the engine's instance first gets
    the primary backends, and every backend once none of their adapters matches
    `wanted` (a machine with OpenGL only, or ENGINE_ADAPTER=OpenGL), even after a first
    context. Code that uses wgpu after the engine shares that instance, and sees
    OpenGL's adapters only after such a fallback."""
    global _primary_only
    if _primary_backends_first():
        _primary_only = True
    adapters = list(wgpu.gpu.enumerate_adapters_sync())
    if _primary_only and not _matching(adapters, wanted):
        _every_backend()
        _primary_only = False
        adapters = list(wgpu.gpu.enumerate_adapters_sync())
    return adapters


def pick_adapter(wanted: str | None = None):
    """The adapter whose description contains `wanted` (case-insensitive), else the best."""
    _quiet_mesa_runtime_dir()
    try:
        import wgpu
    except ImportError as exc:
        raise DeviceError(f"wgpu is not installed ({exc}); `pip install wgpu`") from None
    try:
        adapters = _enumerate(wgpu, wanted)
    except Exception as exc:  # the native library can fail to load or to enumerate
        raise DeviceError(f"cannot enumerate WebGPU adapters ({exc}); {INSTALL_HINT}") from None
    if not adapters:
        raise DeviceError(f"no WebGPU adapter found; {INSTALL_HINT}")
    if wanted:
        matches = _matching(adapters, wanted)
        if not matches:
            names = "; ".join(a.summary for a in adapters)
            raise DeviceError(f"no WebGPU adapter matches '{wanted}' (have: {names})")
        adapters = matches
    return min(adapters, key=_rank)


@dataclass
class GpuContext:
    """An adapter, its device, and what they can do."""

    adapter: object
    device: object
    features: frozenset[str] = field(default_factory=frozenset)
    limits: dict = field(default_factory=dict)
    # Compute pipelines by WGSL source, shared by every engine on this device: a second
    # engine of the same model (or one sharing kernels) compiles nothing again.
    pipelines: dict[str, object] = field(default_factory=dict, repr=False)
    _weights: object = field(default=None, repr=False)
    lost: str | None = None  # why the device was lost, once known

    @classmethod
    def create(cls, adapter: str | None = None, device=None) -> GpuContext:
        """Make a context; `device` reuses a caller's wgpu device (then its adapter is unknown)."""
        if device is not None:
            return cls(
                adapter=getattr(device, "adapter", None),
                device=device,
                features=frozenset(device.features),
                limits=dict(device.limits),
            )
        wgpu_abi.install()  # wgpu-py's header precompiled and cached (engine/gpu/wgpu_abi.py)
        chosen = pick_adapter(adapter or settings().adapter)
        wanted = [f for f in OPTIONAL_FEATURES if f in chosen.features]
        limits = {
            k: chosen.limits[k]
            for k in (
                "max-storage-buffer-binding-size",
                "max-buffer-size",
                "max-storage-buffers-per-shader-stage",
                "max-compute-invocations-per-workgroup",
                "max-compute-workgroup-size-x",
                "max-compute-workgroup-size-y",
                "max-compute-workgroup-size-z",
                "max-compute-workgroup-storage-size",
                "max-uniform-buffers-per-shader-stage",
                "max-storage-textures-per-shader-stage",
            )
            if k in chosen.limits
        }
        try:
            dev = chosen.request_device_sync(required_features=wanted, required_limits=limits)
        except Exception as exc:
            raise DeviceError(f"{chosen.summary}: cannot create a device ({exc})") from None
        return cls(
            adapter=chosen, device=dev, features=frozenset(dev.features), limits=dict(dev.limits)
        )

    @property
    def info(self) -> dict:
        return dict(self.adapter.info) if self.adapter is not None else {}

    @property
    def name(self) -> str:
        info = self.info
        return f"{info.get('device', '?')} ({info.get('backend_type', '?')})"

    @property
    def has_f16(self) -> bool:
        return "shader-f16" in self.features

    @property
    def has_subgroups(self) -> bool:
        """WGSL subgroup and quad operations (conv1x1's quad weights, engine/gpu/kernels/tile_tables.py)."""
        return "subgroup" in self.features

    @property
    def has_timestamps(self) -> bool:
        return "timestamp-query" in self.features

    @property
    def weights(self):
        """The device's WeightsCache: constant buffers shared by every engine on it."""
        if self._weights is None:
            from engine.gpu.weights import WeightsCache

            self._weights = WeightsCache(self.device)
        return self._weights

    def limit(self, name: str, default: int) -> int:
        return int(self.limits.get(name, default))

    def probe_lost(self) -> bool:
        """Is the device lost? (wgpu-py 0.32 has no `lost` promise: a 4-byte buffer is made
        and destroyed; on a lost device that fails with "Parent device is lost".)"""
        if self.lost is None:
            import wgpu

            try:
                self.device.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_DST).destroy()
            except Exception as exc:
                if _says_lost(exc):
                    self.lost = _last_line(exc)
        return self.lost is not None

    def lost_error(self) -> DeviceLostError:
        return DeviceLostError(
            f"{self.name}: the WebGPU device was lost ({self.lost}); nothing made on it works "
            f"again: make a new Engine (shared_context() gives a new device)"
        )


_LOST_WORDS = ("device is lost", "device was lost", "device lost")


def _says_lost(exc: BaseException) -> bool:
    return any(w in str(exc).lower() for w in _LOST_WORDS)


def _last_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__


def is_device_lost(exc: BaseException, ctx: GpuContext | None = None) -> bool:
    """Did `exc` come from a lost device? (its message says so, or `ctx`'s device fails a
    probe: after device.destroy() mapping fails with an AttributeError inside wgpu-py.)"""
    if isinstance(exc, DeviceLostError):
        return True
    if ctx is not None:
        if _says_lost(exc) and ctx.lost is None:
            ctx.lost = _last_line(exc)
        return ctx.probe_lost()
    return _says_lost(exc)


@contextlib.contextmanager
def device_guard(ctx: GpuContext) -> Iterator[None]:
    """Run GPU work on `ctx`; a lost device raises DeviceLostError (also on later calls)."""
    if ctx.lost is not None:
        raise ctx.lost_error()
    try:
        yield
    except DeviceError:
        raise
    except Exception as exc:
        if is_device_lost(exc, ctx):
            raise ctx.lost_error() from None
        raise


_shared: dict[str | None, GpuContext] = {}


def create_compute_pipeline(device, source: str, label: str):
    """A compute pipeline (entry point `main`, auto layout) for WGSL `source`;
    DeviceError when the shader does not compile."""
    try:
        module = device.create_shader_module(code=source, label=label)
        return device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main"}, label=label
        )
    except Exception as exc:
        raise DeviceError(f"kernel {label}: shader failed to compile: {exc}") from None


def compute_pipeline(ctx: GpuContext, source: str, label: str):
    """The context's pipeline for `source`, created on first use (ctx.pipelines)."""
    if source not in ctx.pipelines:
        ctx.pipelines[source] = create_compute_pipeline(ctx.device, source, label)
    return ctx.pipelines[source]


def shared_context(adapter: str | None = None) -> GpuContext:
    """One context per adapter choice per process, shared by engines and the app; a context
    whose device was lost is replaced by a new one."""
    key = adapter or settings().adapter
    if key in _shared and _shared[key].probe_lost():
        del _shared[key]
    if key not in _shared:
        _shared[key] = GpuContext.create(adapter)
    return _shared[key]
