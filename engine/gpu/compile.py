"""Compile: a graph in, a `Program` out: which kernel runs each op, where each tensor lives,
the dispatches in order and the memory plans. GPU-free: pure Python over the IR, so
tools can plan without a device (engine-latency predicts from it); engine/gpu/resources.py
turns a Program into GPU objects.

1. graph transforms (fuse, drop, merge; engine/transforms) -> the graph that runs;
2. each op -> the first GPU kernel that accepts it (kernels/base.select), else the CPU
   fallback (the reference interpreter): a `CpuStep` between GPU steps;
3. placement: which intermediates are textures (placement.py) under the storage kind;
4. memory plans per storage kind (storage.plan_storage); with an arena every tensor is a
   range of one buffer, so read-only bindings become read_write (`Dispatch.arena`);
5. dispatch specs: each GPU op's kernel builds its Dispatch list (template, bindings, work
   group size and count) and its WGSL is rendered (`render=False`: when first read),
   work groups chosen by the policy (kernels/workgroup_choice.py; "tune" times candidates through
   `timer`, the only step that needs a device).

    program = compile_graph(graph, CompileOptions(precision="fp16"), Target())
    program.steps, program.dispatch_count, program.memory
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from engine.errors import ModelError
from engine.gpu import quant_io
from engine.gpu.adapters import adapter_class
from engine.gpu.checks import BufferLimits, check_bindings, check_device_limits, check_storable
from engine.gpu.kernels.base import BuildContext, Dispatch, select
from engine.gpu.placement import Placement, TextureLimits, op_storage, place
from engine.gpu.progress import report
from engine.gpu.storage import StoragePlan, plan_storage, texture_tiles
from engine.gpu.workgroups import DeviceLimits
from engine.memory import ArenaPlan
from engine.memory import planner as registry_planner
from engine.model.ir import Graph
from engine.precision import precision as precision_of
from engine.reference import quantized as reference_quantized
from engine.reference import registry as reference_kernels
from engine.transforms.quantized import to_float
from engine.transforms.resize_inputs import has_dynamic_shapes, resize_inputs

WORKGROUP_POLICIES = ("table", "heuristic", "tune")
# Kernel sets: "optimized", the fastest kernels (unrolled register blocks, specialised
# first layers); "compact", each op's kernel at its smallest work shape with loops
# rolled up: far less shader code, so it compiles several times faster and runs slower
# (docs/architecture.md "Kernel sets"; figures: docs/benchmarks.md). ar-demo's window
# starts on compact and switches to optimized in the background.
KERNEL_SETS = ("optimized", "compact")
TUNE_METHODS = ("descent", "exhaustive")
# Default work group policy: rules I-V, no timing (docs/workgroups.md, "Measured": on
# lavapipe as fast as or faster than the kernels' fixed sizes, "table", on the core models).
DEFAULT_WORKGROUPS = "heuristic"
# (transformed graph, texture tensors, their tiles: BuildContext.texture_tiles) -> a function
# timing one of its dispatches, in ms
TimerFactory = Callable[
    [Graph, frozenset[int], Mapping[int, tuple[int, int, int, int]]], Callable[[Dispatch], float]
]


@dataclass(frozen=True)
class Target:
    """What compiling needs to know about the device: limits, no GPU objects."""

    max_uniform_bytes: int = 65536
    storage_alignment: int = 256
    textures: TextureLimits = TextureLimits()
    workgroups: DeviceLimits = DeviceLimits()
    adapter: str = "gpu"  # the adapter class (engine/gpu/adapters.py): tile tables key on it
    buffers: BufferLimits = BufferLimits()
    subgroups: bool = False  # the device has WGSL subgroup and quad operations

    @classmethod
    def of(cls, ctx) -> Target:
        """The limits of a GpuContext's device."""
        workgroups = DeviceLimits.from_wgpu(ctx.limits, ctx.info)
        default = BufferLimits()
        return cls(
            max_uniform_bytes=ctx.limit("max-uniform-buffer-binding-size", 65536),
            storage_alignment=ctx.limit("min-storage-buffer-offset-alignment", 256),
            textures=TextureLimits(
                ctx.limit("max-texture-dimension-2d", 8192),
                ctx.limit("max-texture-array-layers", 256),
            ),
            workgroups=workgroups,
            adapter=adapter_class(ctx.info),
            buffers=BufferLimits(
                max_buffer_bytes=ctx.limit("max-buffer-size", default.max_buffer_bytes),
                max_binding_bytes=ctx.limit(
                    "max-storage-buffer-binding-size", default.max_binding_bytes
                ),
                max_uniform_bytes=ctx.limit("max-uniform-buffer-binding-size", 65536),
                max_groups=workgroups.max_groups,
            ),
            subgroups=ctx.has_subgroups,
        )


@dataclass(frozen=True)
class CompileOptions:
    precision: str = "fp32"
    storage: str = "buffer"  # the kind of intermediates: "buffer" | "texture"
    planner: str | None = None  # engine/memory/registry.py name; None: the smallest plan
    texture_planner: str | None = None  # overrides the texture plan's planner
    transforms: bool = True
    workgroups: str = DEFAULT_WORKGROUPS
    tune_method: str = "descent"
    kernels: str = "optimized"  # KERNEL_SETS

    @property
    def compact(self) -> bool:
        return self.kernels == "compact"

    def __post_init__(self) -> None:
        precision_of(self.precision)  # ValueError naming the precisions
        if self.storage not in ("buffer", "texture"):
            raise ValueError(f"storage kind must be buffer or texture, not {self.storage!r}")
        if self.workgroups not in WORKGROUP_POLICIES:
            raise ValueError(
                f"workgroups must be one of {WORKGROUP_POLICIES}, not {self.workgroups!r}"
            )
        if self.kernels not in KERNEL_SETS:
            raise ValueError(f"kernels must be one of {KERNEL_SETS}, not {self.kernels!r}")
        if self.tune_method not in TUNE_METHODS:
            raise ValueError(f"tune_method must be one of {TUNE_METHODS}, not {self.tune_method!r}")
        check_planners(self.planner, self.texture_planner, self.storage)


@dataclass(frozen=True)
class GpuStep:
    op_index: int
    dispatches: tuple[Dispatch, ...]


@dataclass(frozen=True)
class CpuStep:
    op_index: int


@dataclass
class Program:
    """A compiled graph: steps in execution order and where every tensor lives."""

    source_graph: Graph  # as imported
    graph: Graph  # after transforms: what runs
    options: CompileOptions
    placement: Placement
    plans: StoragePlan
    steps: list[GpuStep | CpuStep]
    fallback_ops: list[str]  # "#i TYPE" of ops that run on the CPU
    choices: list = field(default_factory=list)  # work group choices (kernels/workgroup_choice.py)
    clock: dict[str, float] = field(default_factory=dict)  # seconds per compile phase
    # int8/uint8 graph inputs/outputs of a quantized model: {name: (Quantization, dtype)}
    integer_io: dict = field(default_factory=dict)

    @property
    def textures(self) -> frozenset[int]:
        return self.placement.textures

    @property
    def arena(self) -> bool:
        return isinstance(self.plans.buffers.plan, ArenaPlan)

    @property
    def memory(self):
        return self.plans.memory

    @property
    def dispatches(self) -> list[Dispatch]:
        """Every GPU dispatch in order (graph I/O conversions not included)."""
        return [d for s in self.steps if isinstance(s, GpuStep) for d in s.dispatches]

    @property
    def dispatch_count(self) -> int:
        return len(self.dispatches)


def check_planners(planner: str | None, texture_planner: str | None, storage: str) -> None:
    """ValueError unless the planners exist and plan the kinds `storage` needs (the
    registry, engine/memory/registry.py, says which kinds each plans)."""
    if planner is not None:
        registry_planner(planner, "buffer")
    if texture_planner is not None:
        try:
            registry_planner(texture_planner.removeprefix("texture_"), "texture")
        except ValueError as exc:
            raise ValueError(f"texture_planner: {exc}") from None
    elif storage == "texture" and planner is not None:
        registry_planner(planner, "texture")


def compile_graph(
    graph: Graph,
    options: CompileOptions = CompileOptions(),
    target: Target = Target(),
    *,
    input_shapes: dict[str, tuple[int, ...]] | None = None,
    timer: TimerFactory | None = None,
    tune_cache=None,
    render: bool = True,
) -> Program:
    """The Program of `graph` (see the module docstring); ModelError when an op has
    neither a GPU nor a CPU kernel, its kernel rejects it, or the program does not fit the
    target's limits (checks.check_device_limits). With work groups "tune",
    `timer(graph, textures, texture_tiles)` gives the function that times one dispatch of
    the transformed graph on the device; `tune_cache` remembers the choices. `input_shapes`
    fixes the inputs' dynamic (-1) dimensions (engine/transforms/resize_inputs.py).
    `render=False` leaves every Dispatch's WGSL unrendered (rendered when its `source` is
    first read): for callers that read only the dispatches' other facts (engine-latency).

    Every stage runs under `_stage`: a failure other than ModelError (a file that passed
    engine/model/validate.py and still breaks a pass or a kernel) becomes a ModelError
    naming the file and the op or stage, never a raw exception."""
    report(graph.name, "graph")
    name = graph.name or "<graph>"
    clock: dict[str, float] = {}
    t0 = time.perf_counter()
    if input_shapes or has_dynamic_shapes(graph):
        # Fix the inputs' dynamic dimensions and propagate every shape, as LiteRT's
        # resize_tensor_input + AllocateTensors.
        graph = resize_inputs(graph, input_shapes)
    # Quantized models run in float between fake quantizations (engine/transforms/
    # quantized.py); int8 graph I/O is converted by run() (engine/gpu/quant_io.py).
    with _stage(f"{name}: quantized graph to float"):
        integer_io = quant_io.integer_io(graph)
        floated = to_float(graph)
    with _stage(f"{name}: graph transforms"):
        g = _transformed(floated, options, target) if options.transforms else floated
    check_storable(g)  # a ModelError naming file, op and tensor, before any kernel
    clock["transforms"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    kernels = []
    for i, op in enumerate(g.ops):
        with _stage(f"{name}: op #{i} {op.type}: choosing a kernel"):
            kernels.append(select(op, g, compact=options.compact))
    with _stage(f"{name}: placing and planning tensors"):
        caps = [op_storage(k, op, g) for k, op in zip(kernels, g.ops, strict=True)]
        placement = place(g, caps, options.storage, target.textures)
        prec = precision_of(options.precision)
        plans = plan_storage(g, placement.textures, options.planner, options.texture_planner,
                             prec.element_bytes, target.storage_alignment)  # fmt: skip
    arena = isinstance(plans.buffers.plan, ArenaPlan)
    clock["planning"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    choices: list = []
    tune_ms = [0.0]
    tiles = texture_tiles(g, plans.textures)
    tune = options.workgroups == "tune" and timer and not options.compact
    time_fn = timer(g, placement.textures, tiles) if tune else None

    def timed(d: Dispatch) -> float:
        t = time.perf_counter()
        ms = time_fn(replace(d, arena=arena))
        tune_ms[0] += time.perf_counter() - t
        return ms

    ctx = BuildContext(
        precision=options.precision,
        max_uniform_bytes=target.max_uniform_bytes,
        textures=placement.textures,
        texture_tiles=tiles,
        workgroups=options.workgroups,
        limits=target.workgroups,
        adapter=target.adapter,
        subgroups=target.subgroups,
        compact=options.compact,
        tune_cache=tune_cache,
        tune_timer=timed if time_fn is not None else None,
        tune_method=options.tune_method,
        choices=choices,
    )
    steps: list[GpuStep | CpuStep] = []
    fallback: list[str] = []
    for i, (op, kernel) in enumerate(zip(g.ops, kernels, strict=True)):
        where = f"{g.name}: op #{i} {op.type}"
        if kernel is None:
            if reference_quantized.quantized_tensors(op, g):  # to_float left none
                raise ModelError(f"{where} still has integer tensors")
            with _stage(where):
                found = cpu_kernel(op, g, i)
            if found is None:
                raise ModelError(f"{where} has neither a GPU nor a CPU kernel")
            fallback.append(f"#{i} {op.type}")
            steps.append(CpuStep(i))
            continue
        with _stage(where):
            dispatches = tuple(replace(d, arena=arena) for d in kernel.build(op, g, ctx))
            if render:  # now, under this op's guard and clock (Dispatch.source keeps it)
                for d in dispatches:
                    d.source  # noqa: B018
        steps.append(GpuStep(i, dispatches))
    clock["workgroup_tuning"] = tune_ms[0]
    clock["kernel_codegen"] = time.perf_counter() - t0 - tune_ms[0]
    program = Program(graph, g, options, placement, plans, steps, fallback, choices, clock,
                      integer_io)  # fmt: skip
    check_bindings(g, program)
    check_device_limits(g, program, target.buffers)  # before Resources allocates anything
    return program


@contextmanager
def _stage(where: str) -> Iterator[None]:
    """Run a compile stage; any failure but a ModelError becomes one naming `where`.

    The file passed engine/model/validate.py, so such a failure is a combination of
    shapes and options a pass or kernel cannot handle: the engine cannot run this model.
    The original exception stays chained (`__cause__`) for whoever debugs the kernel."""
    try:
        yield
    except ModelError:
        raise
    except Exception as exc:
        message = str(exc).splitlines()[0] if str(exc) else ""
        if not isinstance(exc, ValueError):  # kernels reject ops with a ValueError saying why
            message = f"cannot compile ({type(exc).__name__}: {message})"
        raise ModelError(f"{where}: {message}") from exc


def cpu_kernel(op, graph: Graph, index: int):
    """The reference kernel of a CPU-fallback op: QUANTIZE / DEQUANTIZE of the float form
    get their fake-quant kernels (engine/reference/quantized), others the float ones."""
    return reference_quantized.bind(op, graph, index) or reference_kernels.kernel(op.type)


def _transformed(graph: Graph, options: CompileOptions, target: Target) -> Graph:
    """The graph transforms, plus the kernel fusions where this adapter class runs them
    (not in the compact set: it keeps its few shared shaders)."""
    from engine.gpu.kernels.tile_tables import fused_tile
    from engine.transforms import KERNEL_PASSES, PASSES, run_all

    fuse = not options.compact and fused_tile(target.adapter) is not None
    return run_all(graph, PASSES + KERNEL_PASSES if fuse else PASSES)
