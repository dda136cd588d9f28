"""The engine's fused dispatch list for a graph, computed without a GPU.

The one module of engine.latency that reads the engine's compile result: it runs
engine/gpu/compile.py's compile_graph (GPU-free) for the profiled adapter:
1. graph transforms: fusion decides what runs;
2. kernel selection, the first kernel accepting an op (a CPU-fallback op: ModelError);
3. placement of intermediates in buffers or textures by the adapter's storage kind for
   the precision (the engine's own rule, engine/gpu/storage_choice.py);
4. each kernel's build with the adapter's DeviceLimits and the default work group
   policy: the Dispatch objects (bindings, work group size and count);
and adds the upload/download conversions (engine/gpu/io.py's `conversion` per input and
output). Nothing here reads a Dispatch's `source`, so no shader is rendered: jinja2 on
the macro-heavy templates was most of the time of a prediction (~1 s for a 40-dispatch
cell on a busy 2-core machine).
The adapter's side of that (limits, texture limits, storage kind per precision) is an
`AdapterProfile`: read once from a GpuContext when measuring, saved with the data and
the predictors, so a prediction never creates a device.

    profile = AdapterProfile.from_context(shared_context())
    rows = dispatch_list(graph, profile, "fp32")   # [DispatchInfo], in run order
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from engine.errors import ModelError

if TYPE_CHECKING:  # numpy-free import: a cached prediction needs no graph code
    from engine.model.ir import Graph


@dataclass(frozen=True)
class AdapterProfile:
    """What compile-time decisions read from an adapter (no device needed to use it)."""

    name: str  # slug for file names: "lavapipe", "nvidia-h100", ...
    device: str  # adapter info "device"
    driver: str  # adapter info "description" (driver and version)
    backend: str
    adapter_type: str  # "CPU", "DiscreteGPU", ...
    limits: dict  # DeviceLimits fields
    max_uniform_bytes: int = 65536
    max_texture_2d: int = 8192
    max_texture_layers: int = 256
    alignment: int = 256  # min-storage-buffer-offset-alignment
    storage: dict = field(default_factory=lambda: {"fp32": "buffer", "fp16": "buffer"})

    @classmethod
    def from_context(cls, ctx, precisions=("fp32", "fp16")) -> AdapterProfile:
        """Read the profile of a live GpuContext (storage kinds by the engine's default)."""
        from engine.gpu.storage_choice import resolve_storage
        from engine.gpu.workgroups import DeviceLimits

        info = ctx.info or {}
        limits = DeviceLimits.from_wgpu(ctx.limits, info)
        storage = {p: resolve_storage("auto", ctx, p) for p in precisions
                   if p == "fp32" or ctx.has_f16}  # fmt: skip
        return cls(
            name=adapter_slug(info),
            device=str(info.get("device", ctx.name)),
            driver=str(info.get("description", "")),
            backend=str(info.get("backend_type", "")),
            adapter_type=str(info.get("adapter_type", "")),
            limits={k: list(v) if isinstance(v, tuple) else v for k, v in asdict(limits).items()},
            max_uniform_bytes=ctx.limit("max-uniform-buffer-binding-size", 65536),
            max_texture_2d=ctx.limit("max-texture-dimension-2d", 8192),
            max_texture_layers=ctx.limit("max-texture-array-layers", 256),
            alignment=ctx.limit("min-storage-buffer-offset-alignment", 256),
            storage=storage,
        )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> AdapterProfile:
        return cls(**d)


def adapter_slug(info: dict) -> str:
    """A short file-name-safe adapter name: lavapipe for llvmpipe, else vendor-device."""
    if str(info.get("vendor", "")).lower() == "llvmpipe":
        return "lavapipe"
    text = f"{info.get('vendor', '')}-{info.get('device', '')}".lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:40] or "adapter"


@dataclass(frozen=True)
class DispatchInfo:
    """One dispatch as the engine would record it, with its static costs."""

    op_index: int  # in the transformed graph; -1 for the io conversions
    op_type: str  # "io" for the conversions
    kernel: str
    inputs: tuple[tuple[int, ...], ...]  # shapes of the tensors it reads
    output: tuple[int, ...]
    workgroup: tuple[int, int, int]  # @workgroup_size
    groups: tuple[int, int, int]  # dispatch_workgroups
    flops: int  # its share of the op's FLOPs (engine.model.cost, multiply-add = 2)
    bytes_read: int  # tensors (PHWC4, storage precision) + constants bound
    bytes_written: int
    const_bytes: int  # weights/biases/parameters among bytes_read
    uniform: bool  # constants in a uniform buffer
    storage: str  # "<input kind>><output kind>", e.g. "buffer>texture"
    epilogue: int  # fused element-wise steps

    @property
    def group_count(self) -> int:
        return self.groups[0] * self.groups[1] * self.groups[2]

    @property
    def invocations(self) -> int:
        w = self.workgroup
        return self.group_count * w[0] * w[1] * w[2]

    def to_list(self) -> list:
        return [getattr(self, f) for f in FIELDS]

    @classmethod
    def from_list(cls, values: list) -> DispatchInfo:
        d = dict(zip(FIELDS, values, strict=True))
        d["inputs"] = tuple(tuple(s) for s in d["inputs"])
        for k in ("output", "workgroup", "groups"):
            d[k] = tuple(d[k])
        return cls(**d)


FIELDS = tuple(DispatchInfo.__dataclass_fields__)
IO_UP, IO_DOWN = "hwc_to_phwc4", "phwc4_to_hwc"  # the io conversions' kernels (_io below)


def transformed(graph: Graph) -> Graph:  # features.py: the graph whose memory is planned
    """The graph the engine runs (its transforms applied)."""
    from engine.transforms import run_all

    return run_all(graph)


def compiled(graph: Graph, profile: AdapterProfile, precision: str = "fp32"):
    """The engine's Program of `graph` for the profiled adapter (no device, no shader
    rendered: engine/gpu/compile.py)."""
    from engine.gpu.adapters import adapter_class
    from engine.gpu.compile import CompileOptions, Target, compile_graph
    from engine.gpu.placement import TextureLimits
    from engine.gpu.workgroups import DeviceLimits

    limits = {k: tuple(v) if isinstance(v, list) else v for k, v in profile.limits.items()}
    target = Target(
        max_uniform_bytes=profile.max_uniform_bytes,
        storage_alignment=profile.alignment,
        textures=TextureLimits(profile.max_texture_2d, profile.max_texture_layers),
        workgroups=DeviceLimits(**limits),
        adapter=adapter_class(
            {
                "device": profile.device,
                "description": profile.driver,
                "adapter_type": profile.adapter_type,
            }
        ),
    )
    storage = profile.storage.get(precision, "buffer")
    return compile_graph(graph, CompileOptions(precision, storage), target, render=False)


def dispatch_list(graph: Graph, profile: AdapterProfile, precision: str = "fp32") -> list:
    """Every dispatch of one run of `graph` on the profiled adapter, in order."""
    from engine.gpu.kernels.base import BuildContext
    from engine.model.cost import op_flops

    program = compiled(graph, profile, precision)
    if program.fallback_ops:
        raise ModelError(
            f"{graph.name}: ops {program.fallback_ops} have no GPU kernel (CPU fallback)"
        )
    g = program.graph
    ctx = BuildContext(precision=precision, textures=program.textures)  # storage kinds
    elem = 2 if precision == "fp16" else 4
    out = [_io(g, t, f"{IO_UP}.wgsl", elem, precision) for t in g.inputs]
    for step in program.steps:
        op = g.ops[step.op_index]
        total = sum(_volume(d.workgroups) for d in step.dispatches) or 1
        flops = op_flops(g, op)
        for d in step.dispatches:
            share = flops * _volume(d.workgroups) // total
            out.append(_info(g, step.op_index, op.type, d, share, ctx, elem))
    out += [_io(g, t, f"{IO_DOWN}.wgsl", elem, precision) for t in g.outputs]
    return out


def _volume(v) -> int:
    return v[0] * v[1] * v[2]


def _tensor_bytes(g: Graph, t: int, elem: int) -> int:
    from engine.model.layout import phwc4_shape, slices

    b, h, w, c = phwc4_shape(g.tensors[t].shape)
    return b * h * w * slices(c) * 4 * elem


def _info(g: Graph, i: int, op_type: str, d, flops: int, ctx, elem: int) -> DispatchInfo:
    from engine.gpu.kernels.base import FIXED_DTYPES as fixed  # 4 bytes at any precision

    read = written = const = 0
    uniform = False
    ins, out_shape, kinds = [], (), []
    for b in d.bindings:
        if b.role == "const":
            n = b.data.nbytes if b.data is not None else 0
            if elem == 2 and b.dtype not in fixed:
                n //= 2
            const += n
            uniform = uniform or b.space == "uniform"
        elif b.role == "in":
            read += _tensor_bytes(g, b.tensor, elem)
            ins.append(tuple(g.tensors[b.tensor].shape))
            kinds.append(ctx.kind(b.tensor))
        else:
            written += _tensor_bytes(g, b.tensor, elem)
            out_shape = tuple(g.tensors[b.tensor].shape)
            out_kind = ctx.kind(b.tensor)
    op = g.ops[i]
    return DispatchInfo(
        op_index=i,
        op_type=op_type,
        kernel=d.kernel,
        inputs=tuple(ins),
        output=out_shape,
        workgroup=tuple(d.workgroup_size),
        groups=tuple(d.workgroups),
        flops=int(flops),
        bytes_read=read + const,
        bytes_written=written,
        const_bytes=const,
        uniform=uniform,
        storage=f"{kinds[0] if kinds else 'none'}>{out_kind if out_shape else 'none'}",
        epilogue=len(op.attrs.get("epilogue", ())),
    )


def _io(g: Graph, t: int, template: str, elem: int, precision: str) -> DispatchInfo:
    """An upload (hwc_to_phwc4) or download (phwc4_to_hwc) conversion dispatch."""
    from engine.gpu.io import conversion
    from engine.gpu.kernels.base import shape4

    s4 = shape4(g, t)
    upload = template.startswith("hwc")
    d = conversion(template, s4, precision)
    raw, packed = s4.rows * s4.w * s4.c * 4, s4.vec4_count * 4 * elem
    shape = tuple(g.tensors[t].shape)
    return DispatchInfo(
        op_index=-1,
        op_type="io",
        kernel=d.kernel,
        inputs=(shape,),
        output=shape,
        workgroup=d.workgroup_size,
        groups=d.workgroups,
        flops=0,
        bytes_read=raw if upload else packed,
        bytes_written=packed if upload else raw,
        const_bytes=0,
        uniform=False,
        storage="buffer>buffer",
        epilogue=0,
    )
