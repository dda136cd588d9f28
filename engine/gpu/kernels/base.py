"""Kernel specs: pure code generators, as in the TFLite GPU delegate.

A `Kernel` reads one op's attributes and tensor shapes and returns one or more
`Dispatch` objects (a WGSL template and its variables, bindings, work group size and
count; the WGSL is rendered when first read). It never touches the GPU; the runtime
creates buffers, pipelines and bind groups from them.

Several kernels may serve one op type: `select()` returns the first whose
`accepts()` is true, in registration order by `priority` (specialised first,
the generic one accepts everything it can run). The compact kernel set (compile.py
KERNEL_SETS) skips kernels that are not `compact` and builds the others with their
smallest work shape: small shaders that compile fast (docs/architecture.md, "Kernel
sets").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace

import numpy as np

from engine.gpu.codegen import render
from engine.model.ir import Graph, Op
from engine.model.layout import phwc4_shape, slices
from engine.precision import Precision
from engine.precision import precision as precision_of


@dataclass(frozen=True, eq=False)
class Binding:
    """Binding i of group 0 (i: its place in the dispatch's bindings): a tensor read, a
    tensor written, or packed constants, and the WGSL variable that holds it. The one
    statement of a binding: its declaration in the shader is generated from it."""

    role: str  # "in" | "out" | "const"
    tensor: int = -1  # tensor id for "in"/"out"
    data: np.ndarray | None = None  # packed constants for "const"
    space: str = "storage"  # "storage" or "uniform" for "const"
    dtype: str = "storage"  # "const" data type: the storage precision, or FIXED_DTYPES's
    name: str = ""  # the WGSL variable
    type: str = ""  # its WGSL type: "array<vec4<T>>", "texture_2d_array<f32>", "Params"...

    def declaration(self, index: int, arena: bool = False) -> str:
        """`@group(0) @binding(index) var<...> name: type;`: a texture or sampler is a
        handle (no address space), a uniform constant var<uniform>, a written buffer
        read_write, any other buffer read (read_write too with an arena: Dispatch.arena)."""
        if self.type.startswith(("texture", "sampler")):
            space = ""
        elif self.space == "uniform":
            space = "<uniform>"
        elif self.role == "out" or arena:
            space = "<storage, read_write>"
        else:
            space = "<storage, read>"
        return f"@group(0) @binding({index}) var{space} {self.name}: {self.type};"


# "const" data types that do not follow the storage precision (4 bytes each): f32 where a
# kernel wants full precision at fp16, i32 for the compact set's shapes (params.py).
FIXED_DTYPES = {"f32": np.float32, "i32": np.int32}
MAX_GROUPS = 65535  # WebGPU's minimum maxComputeWorkgroupsPerDimension


@dataclass(frozen=True, eq=False)
class Dispatch:
    """One dispatch of a kernel: its shader (a template and the template's variables),
    bindings, work group size and work group count. The WGSL is rendered on first use of
    `source`: what only reads the rest (engine-latency's features) never renders."""

    kernel: str  # kernel name, for stats and profiles
    template: str  # shaders/engine/<template>
    params: dict = field(repr=False)  # the template's variables
    bindings: tuple[Binding, ...]
    workgroup_size: tuple[int, int, int]  # what the shader's @workgroup_size declares
    workgroups: tuple[int, int, int]
    # Tensors are ranges of one arena buffer (compile.py): a WebGPU usage scope forbids
    # binding a buffer read-only and read-write at once, but allows several read-write,
    # so every storage binding is declared read_write.
    arena: bool = False

    @cached_property
    def source(self) -> str:
        """The rendered WGSL (render_shader), also the pipeline cache key; the template
        also gets `workgroup_size`, which its @workgroup_size renders."""
        return render_shader(self.template, self.bindings, self.arena,
                             workgroup_size=self.workgroup_size, **self.params)  # fmt: skip


def render_shader(template: str, bindings, arena: bool = False, **params) -> str:
    """`template` rendered with `params` and `bindings`: each binding's declaration
    (binding i of group 0: its place in `bindings`) under its variable name, placed by the
    template (`{{ bindings.src }}`), so a template never numbers a binding itself.
    ValueError when two bindings share a name or one is declared nowhere or twice."""
    lines = {b.name: b.declaration(i, arena) for i, b in enumerate(bindings)}
    if len(lines) != len(bindings):
        raise ValueError(f"{template}: two bindings share a name ({', '.join(lines)})")
    source = render(template, bindings=SimpleNamespace(**lines), **params)
    for name, line in lines.items():
        if source.count(line) != 1:
            count = source.count(line)
            raise ValueError(f"{template}: binding {name!r} declared {count} times, not once")
    return source


@dataclass(frozen=True)
class BuildContext:
    """What a kernel may specialise on besides the op."""

    precision: str = "fp32"  # "fp32" | "fp16" (storage and arithmetic type)
    max_uniform_bytes: int = 65536
    max_workgroup_invocations: int = 256
    # Tensors stored as 2-D array textures (engine/gpu/placement.py); all others are
    # buffers. Only kernels whose `storage_kinds` include "texture" see a non-empty set.
    textures: frozenset[int] = frozenset()
    # Texture tensors folded into shared layers by the texture plan (engine/memory/plan.py
    # TexturePlan.tiles): tensor -> (across, down, width, rows), slice s at texel
    # (x + width * (s % across), row + rows * (s / across % down)), layer s / (across * down)
    # of the tensor's own view. Tensors not listed: texel (x, row), layer s.
    texture_tiles: Mapping[int, tuple[int, int, int, int]] = field(default_factory=dict)
    # Work group selection (engine/gpu/kernels/workgroup_choice.py, docs/workgroups.md): the policy
    # ("table" = the kernels' fixed sizes), the device's limits (a DeviceLimits; None:
    # WebGPU's minimums) and, for "tune", the cache (a TuneCache), the timer
    # (Dispatch -> ms, one run of that dispatch on the device), method and runs.
    workgroups: str = "table"
    limits: object | None = None
    # The adapter class (engine/gpu/adapters.py: "llvmpipe", "swiftshader", "cpu", "gpu"):
    # kernels with per-adapter tile tables read theirs by it, deterministically.
    adapter: str = "gpu"
    # The device has WGSL subgroup and quad operations (the "subgroup" feature).
    subgroups: bool = False
    # The compact kernel set (compile.py KERNEL_SETS): each kernel at its smallest work
    # shape, loops not unrolled where the kernel can (conv2d's taps); same arithmetic.
    compact: bool = False
    tune_cache: object | None = field(default=None, compare=False)
    tune_timer: Callable[[Dispatch], float] | None = field(default=None, compare=False)
    tune_method: str = "descent"
    tune_runs: int = 3
    # When a list: every choice made is appended (kernel, signature, table candidate,
    # choice, make) for the benchmark (engine/tools/bench/workgroups.py).
    choices: list | None = field(default=None, compare=False)

    @property
    def precision_info(self) -> Precision:
        """Every fact of the storage precision (engine/precision.py)."""
        return precision_of(self.precision)

    @property
    def wgsl_type(self) -> str:
        return self.precision_info.wgsl

    @property
    def texture_format(self) -> str:
        return self.precision_info.texture_format

    def kind(self, tensor: int) -> str:
        """Storage kind of a tensor: "texture" or "buffer"."""
        return "texture" if tensor in self.textures else "buffer"


def tensor_binding(ctx: BuildContext, name: str, tensor: int, access: str) -> Binding:
    """Tensor `tensor` read ("read") or written ("write") as the WGSL variable `name`: a
    PHWC4 buffer array<vec4<T>>, or a 2-D array texture (sampled when read, write-only
    storage when written; vec4<f32> texels at both precisions)."""
    if ctx.kind(tensor) == "buffer":
        wgsl = "array<vec4<T>>"
    elif access == "read":
        wgsl = "texture_2d_array<f32>"
    else:
        wgsl = f"texture_storage_2d_array<{ctx.texture_format}, write>"
    return Binding("in" if access == "read" else "out", tensor=tensor, name=name, type=wgsl)


def tensor_arg(ctx: BuildContext, name: str, tensor: int, access: str) -> dict:
    """A tensor argument for the macros of shaders/engine/tensor.wgsl (load, store), with
    its Binding under "binding"."""
    return {
        "name": name,
        "kind": ctx.kind(tensor),
        "tiles": ctx.texture_tiles.get(tensor) if tensor in ctx.textures else None,
        "binding": tensor_binding(ctx, name, tensor, access),
    }


@dataclass(frozen=True)
class Shape4:
    """A tensor's PHWC4 geometry: B*H rows of W pixels, C channels in S slices."""

    b: int
    h: int
    w: int
    c: int

    @property
    def s(self) -> int:
        return slices(self.c)

    @property
    def rows(self) -> int:  # batch folds into height
        return self.b * self.h

    @property
    def vec4_count(self) -> int:
        return self.rows * self.w * self.s


def shape4(graph: Graph, tensor: int) -> Shape4:
    return Shape4(*phwc4_shape(graph.tensors[tensor].shape))


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class Kernel:
    """Base class: subclasses set `name`, `op_types`, `priority` and implement build()."""

    name = "kernel"
    op_types: tuple[str, ...] = ()
    priority = 100  # lower is tried first
    # Storage kinds its shaders can read tensors from and write its outputs to
    # ("texture": the template goes through shaders/engine/tensor.wgsl and passes the
    # BuildContext to epilogue.build). engine/gpu/placement.py asks read_kinds /
    # write_kinds per op and tensor; override them for finer choices.
    storage_kinds: tuple[str, ...] = ("buffer",)
    # In the compact kernel set: False for kernels whose shaders are large however they
    # are built (unrolled taps with literal weights, unrolled output tiles); the next
    # kernel that accepts the op runs it there.
    compact = True

    def read_kinds(self, op: Op, graph: Graph, tensor: int) -> tuple[str, ...]:
        """Kinds `tensor` (an input or epilogue operand of `op`) may be stored as."""
        return self.storage_kinds

    def write_kinds(self, op: Op, graph: Graph, tensor: int) -> tuple[str, ...]:
        """Kinds output `tensor` of `op` may be stored as."""
        return self.storage_kinds

    def accepts(self, op: Op, graph: Graph) -> bool:
        return True

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        raise NotImplementedError


@dataclass
class _Registry:
    kernels: dict[str, list[Kernel]] = field(default_factory=dict)


_REGISTRY = _Registry()


def register(cls: type[Kernel]) -> type[Kernel]:
    """Class decorator: add a kernel for its op types, kept sorted by priority."""
    inst = cls()
    for op_type in cls.op_types:
        lst = _REGISTRY.kernels.setdefault(op_type, [])
        lst.append(inst)
        lst.sort(key=lambda k: k.priority)
    return cls


def candidates(op_type: str) -> list[Kernel]:
    _load()
    return list(_REGISTRY.kernels.get(op_type, []))


def select(op: Op, graph: Graph, compact: bool = False) -> Kernel | None:
    """The first registered kernel that accepts `op` (of the compact set: `compact`
    kernels only), or None (CPU fallback)."""
    for k in candidates(op.type):
        if (k.compact or not compact) and k.accepts(op, graph):
            return k
    return None


def gpu_op_types() -> set[str]:
    _load()
    return set(_REGISTRY.kernels)


def _load() -> None:
    import engine.gpu.kernels as pkg

    pkg.load_all()
