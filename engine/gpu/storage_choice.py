"""Which storage kind holds the intermediate tensors: buffers or 2-D array textures.

`Engine(storage=...)`:
- "auto" (default): a fixed rule over adapter facts and the precision (below), so the same
  model on the same adapter gets the same storage on every machine and every run;
  ENGINE_STORAGE=buffer|texture (engine/config.py) overrides it;
- "buffer" / "texture": that kind;
- "tune": opt-in measurement: the probe block timed with both kinds on this device
  (engine/gpu/storage_probe.py), its answer cached per adapter and precision.

The rule, from measurements on the CPU adapters we have (docs/benchmarks.md, "buffers vs
textures"): lavapipe fp16 storage-buffer reads are slow and textureLoad was 1.6-1.8x faster
in depthwise layers (whole models 0.91-0.98 texture/buffer time), while at fp32 the two
were within noise (1.03-1.06, flipping with machine load): buffers for fp32 (the simpler
kind: arena plans, no texture limits), textures for fp16. SwiftShader (no fp16): texture
storage beat buffers on the face models against LiteRT's GPU engine on the same adapter
(LiteRT time / engine time, 10 interleaved rounds, load 4.5-8: face detection 2.96 vs
1.30, face_landmark 2.43 vs 0.92, selfie 2.89 vs 3.91), so textures there. GPUs get
buffers: on an NVIDIA H100 at fp32 the three app models took 1.13-1.27x less GPU time
with buffers than with textures (docs/benchmarks.md, "Real GPU"); fp16 there: not
measured, buffers too.

wgpu's OpenGL (GLES) backend cannot bind a 2-D array texture as the engine does (it warns
"Unable to create a sampled texture binding for non-zero array layer" and reads garbage:
face detection 1.8e13 off LiteRT, buffers 8e-5, llvmpipe through EGL). There "texture"
(also through ENGINE_STORAGE) is a DeviceError naming the option and the backend; "auto"
and "tune" give buffers.
"""

from __future__ import annotations

from engine.config import settings
from engine.errors import DeviceError
from engine.gpu.adapters import adapter_class

STORAGE_OPTIONS = ("auto", "buffer", "texture", "tune")
KINDS = ("buffer", "texture")

# (adapter class, precision) -> storage kind; classes: engine/gpu/adapters.py.
RULES = {
    ("llvmpipe", "fp32"): "buffer",
    ("llvmpipe", "fp16"): "texture",
    ("swiftshader", "fp32"): "texture",
    ("swiftshader", "fp16"): "texture",  # SwiftShader has no shader-f16: for completeness
    ("cpu", "fp32"): "buffer",
    ("cpu", "fp16"): "texture",
    ("gpu", "fp32"): "buffer",
    ("gpu", "fp16"): "buffer",
}


def default_storage(info: dict, precision: str) -> str:
    """The storage kind the rule gives for an adapter (wgpu `adapter.info`) and precision."""
    return RULES[(adapter_class(info), precision)]


def texture_refusal(info: dict) -> str | None:
    """Why an adapter (wgpu `adapter.info`) cannot hold tensors in 2-D array textures, or
    None when it can."""
    if info.get("backend_type") == "OpenGL":
        return ("wgpu's OpenGL (GLES) backend binds only layer 0 of a 2-D array texture, "
                "so texture storage would give wrong results")  # fmt: skip
    return None


def resolve_storage(option: str, ctx, precision: str, cache_dir=None) -> str:
    """ "buffer" or "texture" for Engine(storage=option) on `ctx` (see the module docstring);
    DeviceError for texture storage on an adapter that cannot hold it."""
    if option not in STORAGE_OPTIONS:
        raise ValueError(f"storage must be one of {STORAGE_OPTIONS}, not {option!r}")
    refusal = texture_refusal(ctx.info)
    forced = settings().storage if option == "auto" else None
    if refusal and "texture" in (option, forced):
        how = "storage='texture'" if option == "texture" else "ENGINE_STORAGE=texture"
        raise DeviceError(f"{how} on {ctx.name}: {refusal}; use storage='buffer' (or 'auto')")
    if option in KINDS:
        return option
    if refusal:  # auto and tune: the one kind that is right here
        return "buffer"
    if option == "tune":
        from engine.gpu.storage_probe import probe_result

        return probe_result(ctx, precision, cache_dir)["kind"]
    return forced or default_storage(ctx.info, precision)
