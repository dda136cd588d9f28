"""Per-adapter-class tile tables of the conv family, chosen from adapter facts only.

An adapter class is read from wgpu's adapter info (engine/gpu/adapters.py; no timing, so
the same adapter always gets the same kernels): "swiftshader" (Google's CPU Vulkan, Subzero JIT: SSE,
4 invocations per SIMD group, a weak register allocator: small blocks win), "llvmpipe"
(Mesa lavapipe: LLVM, 8 lanes with AVX2: larger blocks win), "gpu" (anything else).
The tables hold the measured best per class; the provenance of each is written
next to it (docs/benchmarks.md, "Kernels", has the runs). An environment override
is deliberately absent: benchmarks compare classes by pointing VK_ICD_FILENAMES at
another driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.gpu.adapters import CLASSES, adapter_class  # noqa: F401  (the one definition)


@dataclass(frozen=True)
class FirstTile:
    """conv_first: a BY x BX output block x `slices` output slices per invocation."""

    by: int
    bx: int
    slices: int


# Measured (single-op A/B, 5 interleaved rounds, load 3 on 2 CPUs) on the first layers
# of face_detection (128x128x3, 5x5 s2 -> 24) and face_landmark (192x192x3, 3x3 s2 -> 16),
# BY x BX in {1,2,4} x {1,2,4}, all slices per invocation:
#   SwiftShader: 2x2 2.1-4.4 ms / 2.5 ms; 1x1 4.2-7.1 / 2.3; 4x1 8.2 / 2.6 (generic
#   conv: 57.5 ms on face detection); slices 2 per invocation 9.5 ms;
#   lavapipe: 2x2 0.74 / 0.55 ms; 1x4 0.71 / 0.54; 2x1 0.77 / 0.73 (generic 1.44 / 1.00).
# 2x2 is within noise of the best on both; real GPUs: untested, the same.
# SwiftShader compiles the unrolled block at pipeline creation: whole face_detection,
# texture, 16 interleaved rounds, load 6.9: 2x2 compile 2.6 s / run 29.6 ms, 2x1 (BY 2,
# BX 1) 0.9 s / 30.2 ms, 1x1 0.4 s / 34.7 ms -> 2x1 there.
FIRST_TILES = {"swiftshader": FirstTile(2, 1, 8)}
FIRST_TILE = FirstTile(2, 2, 8)


def first_layer_tile(adapter: str, k: int, stride: int) -> FirstTile:
    """The conv_first tile for a k x k, `stride` layer on `adapter`."""
    return FIRST_TILES.get(adapter, FIRST_TILE)


# conv1x1 (the per-invocation kernel): most output slices per invocation, per class
# (default: conv1x1.BS = 4). SwiftShader's Subzero compiles each pipeline at creation
# in time that grows faster than the unrolled accumulators (8 pixels x 4 slices = 32
# vec4). Whole models, interleaved run() medians (16 rounds of 3), load 6.3-8.6 on 2
# CPUs; compile = the model's conv1x1 shaders, fresh, on one thread:
#   face_landmark texture: <= 4 slices 6.2 s / 47.9 ms; <= 2: 3.4 s / 47.8 ms;
#                          <= 1: 0.7 s / 55.9 ms (17% slower: face_landmark is the
#                          model nearest its target vs LiteRT)
#   <= 1 vs <= 4, 10 rounds: face_detection texture 2.0 s vs 9.7 s, 36.6 vs 40.8 ms;
#   selfie_segmentation texture 2.7 s vs 10.9 s, 106.6 vs 146.5 ms.
# So 2: half the compile time at the same speed.
CONV1X1_SLICES = {"swiftshader": 2}
# conv2d (generic): the same cap. face_landmark's two 3x3 heads (-> 1404, -> 1),
# texture, load 7.2: compile 2.1 s -> 0.4 s, whole-model run 107.8 -> 65.7 ms (that
# spread is the machine's; the heads are ~1 ms of a run).
CONV_SLICES = {"swiftshader": 1}


# conv1x1 weights shared through quads: SwiftShader runs 4 invocations per SIMD group
# and loads a buffer element at an index it cannot prove equal across them lane by
# lane, so every invocation loading all 16 floats of each mat4 costs 64 scalar loads.
# With QUAD_WEIGHTS, invocation q of a quad loads column q only and quadBroadcast
# hands the columns round (16 loads). face_landmark's 22 conv1x1 dispatches on
# SwiftShader (texture, one op at a time, 7 interleaved rounds, load 0.4-0.6): 18.8 ->
# 16.1 ms (1.17x; a constant weight index, the bound of what loads can save: 1.19x).
# Whole models, with / without in one process, 16 interleaved rounds of 3, outputs
# bit-identical: SwiftShader face detection 1.18x, face landmark 1.10x, selfie 1.12x;
# lavapipe 1.02-1.09x (two runs, 16 and 30 rounds, load 1.0-1.2). Real GPUs: not
# measured (their uniform loads are cheap; the broadcasts are not free), so not there.
# The kernel takes a quad to be 4 consecutive local invocation indices. WGSL does not
# promise that (subgroup_invocation_id would, but naga allows it in 1-D groups only);
# SwiftShader (4-wide SIMD groups in index order) and lavapipe do it, and
# tests/gpu/test_conv1x1_quad.py checks it on the adapter it runs on: run that test on
# a class before adding it here.
QUAD_WEIGHTS = frozenset({"swiftshader", "llvmpipe"})


def quad_weights(adapter: str) -> bool:
    """Whether conv1x1 on `adapter` shares each weight matrix across a quad."""
    return adapter in QUAD_WEIGHTS


def conv1x1_slices(adapter: str, default: int) -> int:
    """Most output slices per conv1x1 invocation on `adapter`."""
    return CONV1X1_SLICES.get(adapter, default)


def conv_slices(adapter: str, default: int) -> int:
    """Most output slices per generic conv2d invocation on `adapter`."""
    return CONV_SLICES.get(adapter, default)


@dataclass(frozen=True)
class GemmTile:
    """gemm1x1: WG invocations x BP pixels x BS output slices per work group; shared_k:
    source slices of weights staged in workgroup memory per step (0: none); uniform:
    weights in a uniform block when they fit one binding (else storage)."""

    wg: int
    bp: int
    bs: int
    shared_k: int = 0
    uniform: bool = True
    dims: bool = False  # geometry from a uniform, weights from storage: one shared pipeline


# None: conv1x1's per-invocation kernel (8 pixels x 4 slices, gid-indexed) instead.
# Measured (interleaved, load 1.6-2.6 on 2 CPUs), GEMM tiles (WG, BP, BS) vs conv1x1:
#   lavapipe, single layers: 96x96x16->16 conv1x1 0.52 ms, (32,8,4) 0.51, (16,8,4) 0.53,
#   (64,4,4) 0.61; 24x24x64->64 0.36 vs (16,8,4) 0.37, (64,4,4) 0.61; weights staged in
#   workgroup memory (shared_k 4) 1.78 vs 0.41 on 32x32x64->64 (CPU "shared" memory is
#   plain memory plus barriers); storage instead of uniform weights 0.61 vs 0.41.
#   SwiftShader, face_landmark's 1x1 layers (texture): conv1x1 19.7 ms, (16,8,4) 29.0,
#   (64,4,4) 34.7, shared pipeline (16,8,4,dims) 27.1 (30 pipelines instead of 36).
# So both CPU classes keep conv1x1. Real GPUs, NVIDIA H100 (Vulkan), the conv1x1 family's
# GPU ms per model, face detection / landmark / selfie (timestamps, alternating rounds,
# buffers; `python -m benchmarks.engine.tile_sweep`, docs/benchmarks.md "Real GPU"):
#   first sweep: conv1x1's kernel 1.13 / 1.37 / 0.74; (64,4,4) k4 (the textbook tile this
#   row held before any GPU was measured) 0.92 / 0.95 / 0.64; the same with storage
#   weights 0.73 / 0.61 / 0.53; (64,4,2) k4 0.66 / 0.58 / 0.53; (128,2,2) k8 0.57 / 0.50 /
#   0.47 (textures 0.68 / 0.85 / 0.69: (64,4,2) k4's 0.78 won face landmark there);
#   second sweep: (128,2,2) k8 0.64 / 0.61 / 0.74; with storage weights 0.57 / 0.51 /
#   0.65 (textures 0.71 / 0.68 / 0.77 vs 0.83 / 0.80 / 0.88); (128,2,1) k8 0.56 / 0.52 /
#   0.64 (textures: 0.86 on selfie); (64,2,2), (256,1,2), (128,1,2), k16: slower.
# These models' layers are small (<= 16K pixels, <= 32 slices): fewer outputs per group
# and invocation keep more of the 132 SMs busy; a storage buffer's loads beat a uniform
# block's there (every model and kind of the second and third sweeps; in the first, 10%+
# on buffers and face textures, a tie on selfie's textures).
GEMM_TILES: dict[str, GemmTile | None] = {
    "llvmpipe": None,
    "swiftshader": None,
    "cpu": None,  # other software adapters: as the measured CPU classes
    "gpu": GemmTile(128, 2, 2, shared_k=8, uniform=False),
}
MIN_GROUPS = 16  # work groups to keep every CPU thread busy (conv1x1.py: MIN_GROUPS)


def gemm_tile(adapter: str, pixels: int, src_s: int, dst_s: int) -> GemmTile | None:
    """The class's tile (None: use conv1x1's own kernel), shrunk for small layers: no
    more pixels per group than the layer has, and (halving WG, then BP) at least
    MIN_GROUPS groups where possible."""
    t = GEMM_TILES.get(adapter, GEMM_TILES["gpu"])
    if t is None:
        return None
    if t.dims:  # a shared pipeline: two variants at most (small layers: 8-wide groups)
        return (
            t if pixels >= 4 * t.wg * t.bp else GemmTile(8, t.bp, t.bs, t.shared_k, t.uniform, True)
        )
    wg, bp, bs = t.wg, t.bp, min(t.bs, dst_s)
    while wg * bp >= 2 * pixels and wg > 8:
        wg //= 2
    while wg * bp >= 2 * pixels and bp > 1:
        bp //= 2
    groups = lambda: -(-pixels // (wg * bp)) * -(-dst_s // bs)  # noqa: E731
    while groups() < MIN_GROUPS and (wg > 16 or bp > 1):
        if wg > 16:
            wg //= 2
        else:
            bp //= 2
    return GemmTile(wg, bp, bs, min(t.shared_k, src_s), t.uniform, t.dims)


@dataclass(frozen=True)
class FusedTile:
    """depthwise_conv1x1 (a depthwise conv fused with the 1x1 conv reading it): a work
    group of `wg` invocations takes at most `pixels` output pixels (fewer where work group
    memory or `min_groups` groups ask); the 1x1 half computes `bp` pixels x `bs` output
    slices per invocation."""

    pixels: int = 64
    min_groups: int = 16
    bp: int = 4
    bs: int = 4
    wg: int = 64

    def __post_init__(self) -> None:
        # the kernel's tile is a power of two split into whole pixel blocks, and quads
        # (4 consecutive invocations) must not straddle work groups
        if any(n < 1 or n & (n - 1) for n in (self.pixels, self.bp, self.wg)):
            raise ValueError(f"{self}: pixels, bp and wg must be powers of two")
        if self.wg % 4 or self.bs < 1 or self.min_groups < 1:
            raise ValueError(f"{self}: wg must be a multiple of 4, bs and min_groups >= 1")


# Adapter classes whose compile fuses a depthwise conv into the 1x1 conv that reads it
# (engine/transforms/fuse_depthwise.py), with their tile: none. The fused kernel shares
# the depthwise result through work group memory behind a barrier. `tile_sweep --only
# fused` (buffers; docs/benchmarks.md "Depthwise + 1x1 fused"), run() ms, face detection
# / face landmark / selfie (16 / 20 / 2 pairs fused; 43 -> 27, 48 -> 28 dispatches):
#   lavapipe, 9 rounds: unfused 5.03 / 8.06 / 12.2; FusedTile() 5.90 / 9.39 / 12.4;
#   (128, 2, 4, 4) 5.22 / 8.36 / 14.4 (llvmpipe and SwiftShader run a work group with a
#   barrier as coroutines: fewer, larger groups lose less). A form without a barrier
#   (each invocation's depthwise result in its own slots of work group memory, weights
#   indexed by loop counters) ran even at best: 4.90-5.08 vs 4.89-5.04 ms;
#   SwiftShader, 5 rounds: unfused 15.0 / 24.5 / 36.5; FusedTile() 28.7 / 52.1 / 40.3;
#   (128, 2, 4, 4) 22.3 / 40.9 / 39.3;
#   NVIDIA H100, 15 rounds: unfused 0.95 / 1.06 / 1.43; FusedTile() 1.08 / 1.83 / 1.39;
#   five other rows 1.21-1.35 / 1.68-1.93 / 1.56-1.63 (textures: landmark 1.73 vs 3.37).
#   A dispatch costs a few microseconds there: one fewer saves less than the fused
#   kernel loses to gemm1x1's tiles.
FUSED_TILES: dict[str, FusedTile] = {}


def fused_tile(adapter: str) -> FusedTile | None:
    """The class's fused depthwise + 1x1 tile, or None: the class does not fuse them."""
    return FUSED_TILES.get(adapter)


# depthwise_tiled: (adapter class, kernel size, stride) -> (BY, BX) output block per
# invocation, the only work shape offered to the work group selector for that class
# (others: depthwise.TILES and the selector's full set, as before). Measured 3x3 s1,
# 7 interleaved rounds, load 2.5-2.9 on 2 CPUs, GFLOP/s buffer / texture:
#   SwiftShader 96x96x16: 4x4 1.37 / 1.70, 4x2 (old table, via the heuristic) 1.05 /
#   1.45, 8x4 2.11 / 1.52, 2x2 0.77 / 1.19, 1x1 0.32 / 0.50; stride 2: all within 10%.
#   lavapipe 96x96x16: 4x4 4.55 / 4.30, old 4.00 / 3.71; 24x24x64: 4x4 2.77 / 2.73,
#   old 2.51 / 2.84.
# NVIDIA H100 (the tile_sweep run above), depthwise family GPU ms, face detection /
# landmark / selfie, buffers: no row (the selector's shapes) 0.24 / 0.23 / 0.106; 1x1
# 0.17 / 0.15 / 0.074; 2x2 0.21 / 0.20 / 0.089; 4x2 0.24 / 0.25 / 0.109; 4x4 0.30 / 0.31 /
# 0.142 (textures alike): one output per invocation, every k and stride.
DEPTHWISE_TILES: dict[tuple[str, int, int], tuple[int, int]] = {
    ("swiftshader", 3, 1): (4, 4),
    ("llvmpipe", 3, 1): (4, 4),
    **{("gpu", k, stride): (1, 1) for k in (3, 5) for stride in (1, 2)},
}


def depthwise_tile(adapter: str, k: int, stride: int) -> tuple[int, int] | None:
    """(BY, BX) for a k x k depthwise layer of `stride` on `adapter`, or None."""
    return DEPTHWISE_TILES.get((adapter, k, stride))


@dataclass(frozen=True)
class ReduceTile:
    """Global reductions (mean.wgsl): a tree of `wg` invocations per (slice, batch) from
    `min_pixels` pixels per slice on; below, one invocation per slice loops over them."""

    min_pixels: int
    wg: int

    def __post_init__(self) -> None:
        if self.wg < 1 or self.wg & (self.wg - 1):  # mean.wgsl halves the tree each step
            raise ValueError(f"ReduceTile work group {self.wg}: not a power of two")


# Measured on lavapipe (ms): 7x7x1152 serial 0.035 vs tree(64) 0.54; 128x128x16 tree(16)
# 0.075 vs tree(64) 0.14 vs serial 0.15. Barriers are dear on a CPU, few slices starve.
REDUCE_TILE = ReduceTile(1024, 16)
# NVIDIA H100 (the second tile_sweep run above), selfie segmentation's "other" family
# (10 global pools of 256-16,384 pixels, plus adds, muls, resize, transposed conv), GPU
# ms, buffers / textures: (1024, 16) 1.36 / 1.27; (64, 64) 0.41 / 0.42; (64, 256) 0.28 /
# 0.33; (256, 1024) 0.26 / 0.32. One work group per slice: a wide tree hides the loads.
# 256, not 1024: within 8% of it, and WebGPU's default limit of invocations per work
# group (many adapters stop there). The 64-pixel threshold was not measured (no pool of
# these models is smaller than 256 pixels): below it a tree would be mostly idle.
REDUCE_TILES: dict[str, ReduceTile] = {"gpu": ReduceTile(64, 256)}


def reduce_tile(adapter: str) -> ReduceTile:
    """The global reduction's tree threshold and work group on `adapter`."""
    return REDUCE_TILES.get(adapter, REDUCE_TILE)
