"""Parse wgpu-py's C types in one go, before the first device: 0.5 s off every start-up.

wgpu-py (0.32) talks to wgpu-native through cffi in ABI mode. cffi turns each C type
string into a type lazily, the first time it is used (`ffi.new("WGPUBufferDescriptor *")`),
and each parse runs pycparser over a prelude that declares every typedef of webgpu.h:
about 13 ms per type. The engine's path uses 39 types (adapter and device, buffers,
shaders, pipelines, bind groups, passes, readback), so the first engine in a process
spent 0.54 s of its 1.4 s start-up on lavapipe in pycparser.

`preparse()` parses all the types the engine and the app use as the parameters of one
function declaration, one prelude for all (about 20 ms), and stores each result in
cffi's own cache, exactly as `ffi.typeof` would: later uses find them there. It reads
cffi internals (`ffi._parser`, `ffi._parsed_types`, `ffi._lock`); if they change, or a
type is unknown to the header, it does nothing and cffi parses lazily as before.
tests/gpu/test_ffi_types.py checks, in a fresh process, that the types match the lazy
parse and that an engine (buffers and textures) and its profile parse nothing more.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

# The strings exactly as wgpu-py writes them (cffi caches by the string: "X * " and
# "X *" are two entries). Collected by recording cffi's parses during engine runs
# (both storage kinds, fp16, profile), the vision solutions and ar-demo (headless and
# in a window): a missing one is only parsed lazily, an unused one costs ~0.2 ms.
WGPU_TYPES = (
    # instance, adapter, device, callbacks
    "WGPUInstanceDescriptor *", "WGPUAdapter[]", "WGPUAdapterInfo *", "WGPUStringView *",
    "WGPUChainedStruct *", "WGPUChainedStruct * ", "WGPULimits *", "WGPUNativeLimits *",
    "WGPUFeatureName[]", "WGPUQueueDescriptor *", "WGPUDeviceExtras *",
    "WGPUDeviceDescriptor *", "WGPUDeviceLostCallbackInfo *",
    "WGPUUncapturedErrorCallbackInfo *", "WGPURequestDeviceCallbackInfo *",
    "WGPUBufferMapCallbackInfo *",
    "void(WGPUDevice const *, WGPUDeviceLostReason, WGPUStringView, void *, void *)",
    "void(WGPUDevice const *, WGPUErrorType, WGPUStringView, void *, void *)",
    "void(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView, void *, void *)",
    "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
    # resources and data
    "WGPUBufferDescriptor *", "WGPUTextureDescriptor *", "WGPUTextureViewDescriptor *",
    "WGPUSamplerDescriptor *", "WGPUQuerySetDescriptor *", "WGPUExtent3D *",
    "WGPUOrigin3D *", "WGPUTexelCopyBufferInfo *", "WGPUTexelCopyBufferLayout *",
    "WGPUTexelCopyTextureInfo *", "char []", "uint8_t []", "uint8_t *", "uint32_t []",
    "intptr_t", "uintptr_t",
    # shaders, layouts, pipelines
    "WGPUShaderSourceWGSL *", "WGPUShaderModuleDescriptor *", "WGPUComputeState *",
    "WGPUComputePipelineDescriptor *", "WGPUBindGroupLayoutDescriptor *",
    "WGPUBindGroupLayoutEntry *", "WGPUBindGroupLayoutEntry[]", "WGPUBindGroupLayout[]",
    "WGPUBufferBindingLayout *", "WGPUSamplerBindingLayout *", "WGPUTextureBindingLayout *",
    "WGPUPipelineLayoutDescriptor *", "WGPUBindGroupDescriptor *", "WGPUBindGroupEntry *",
    "WGPUBindGroupEntry[]",
    # render pipelines (the app's overlays and HUD)
    "WGPURenderPipelineDescriptor *", "WGPUVertexState *", "WGPUVertexBufferLayout *",
    "WGPUVertexBufferLayout[]", "WGPUVertexAttribute *", "WGPUVertexAttribute[]",
    "WGPUPrimitiveState *", "WGPUPrimitiveStateExtras *", "WGPUMultisampleState *",
    "WGPUFragmentState *", "WGPUColorTargetState *", "WGPUColorTargetState[]",
    "WGPUBlendState *", "WGPUBlendComponent *",
    # command encoding
    "WGPUCommandEncoderDescriptor *", "WGPUCommandBufferDescriptor *", "WGPUCommandBuffer[]",
    "WGPUComputePassDescriptor *", "WGPUPassTimestampWrites *", "WGPURenderPassDescriptor *",
    "WGPURenderPassColorAttachment *", "WGPURenderPassColorAttachment[]", "WGPUColor *",
    # the window's surface
    "WGPUSurfaceDescriptor *", "WGPUSurfaceSourceXlibWindow *", "WGPUSurfaceCapabilities *",
    "WGPUSurfaceConfiguration *", "WGPUSurfaceTexture *",
)  # fmt: skip


def preparse(types: tuple[str, ...] = WGPU_TYPES) -> bool:
    """Parse the `types` cffi has not parsed yet in one declaration, into its cache.
    True when they are all cached now; False when nothing was done (cffi changed)."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi

        with ffi._lock:
            todo = [t for t in types if t not in ffi._parsed_types]
            if not todo:
                return True
            if not _cache_is_as_expected(ffi._parsed_types):
                return False
            parser = ffi._parser
            params_text = ",\n".join(todo)
            ast = parser._parse(f"void __dummy(\n{params_text}\n);")[0]  # as cffi's parse_type
            params = ast.ext[-1].type.args.params
            parsed = {}
            for text, node in zip(todo, params, strict=True):
                tp, _quals = parser._get_type_and_quals(node.type)
                is_function = tp.is_raw_function  # what ffi.typeof does with "void(...)"
                if is_function:
                    tp = tp.as_function_pointer()
                parsed[text] = (ffi._get_cached_btype(tp), is_function)
            ffi._parsed_types.update(parsed)
        return True
    except Exception as exc:  # cffi's internals are not an API: parse lazily instead
        log.debug("wgpu C types left to cffi's lazy parsing: %s", exc)
        return False


def _cache_is_as_expected(cache: dict) -> bool:
    """cffi's own entries are (ctype, is_function) pairs: a cffi that stores something else
    would be given wrongly shaped entries. wgpu-py's import has parsed one type already
    (its logger callback), so there is an entry to look at. (cffi 2.1 keeps the cache in
    a module's __dict__: skip its dunder keys.)"""
    entry = next((v for k, v in cache.items() if not k.startswith("__")), None)
    return isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], bool)
