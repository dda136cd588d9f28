"""Policy `table`: fixed per-kernel defaults (the baseline the other policies beat).

An entry's work shape is used when the kernel offers it, else the kernel's first;
the work group is shrunk (largest axis halved) until the device allows it.
"""

from __future__ import annotations

from engine.gpu.workgroups.candidates import pow2_floor
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Choice, KernelSignature, Triple, WorkShape

Entry = tuple[Triple, WorkShape | None]  # None: the kernel's first work shape

# What the kernels used before work group selection, all measured on lavapipe
# (llvmpipe, 256 bit); provenance next to each in engine/gpu/kernels/:
TABLE: dict[str, Entry] = {
    # conv.py: 4 pixels x 4 slices, 8x8 groups: best of bx {2,4,8} x bs {1,2,4} x
    # wg {8x4, 8x8, 16x4, 32x1}
    "conv2d": ((8, 8, 1), WorkShape(4, 1, 4)),
    # conv1x1.py: 8 pixels x 4 slices (BP, BS), up to 64 invocations along the flattened
    # pixels (the kernel shrank the group for small layers: MIN_GROUPS)
    "conv1x1": ((64, 1, 1), WorkShape(8, 1, 4)),
    # depthwise.py: TILES (BY, BX) = (4, 2) for 3x3 s1, 8x8 groups on large outputs
    "depthwise_tiled": ((8, 8, 1), WorkShape(2, 4, 1)),
    "depthwise": ((8, 8, 1), WorkShape(1, 1, 1)),
    # elementwise.py: WG 64 x V 4 vec4, best of 32-128 x 1-4
    "binary": ((64, 1, 1), WorkShape(4, 1, 1)),
    "unary": ((64, 1, 1), WorkShape(4, 1, 1)),
    "prelu": ((64, 1, 1), WorkShape(4, 1, 1)),
}
BY_KIND: dict[str, Entry] = {
    "conv": TABLE["conv2d"],
    "depthwise": TABLE["depthwise"],
    "elementwise": TABLE["binary"],
}
DEFAULT: Entry = ((64, 1, 1), None)


def fit(wg: Triple, limits: DeviceLimits) -> Triple:
    """`wg` clamped to the axis limits, then its largest axis halved until the size fits."""
    g = [min(a, pow2_floor(m)) for a, m in zip(wg, limits.max_size, strict=True)]
    while g[0] * g[1] * g[2] > limits.max_invocations:
        i = g.index(max(g))
        g[i] = max(1, g[i] // 2)
    return (g[0], g[1], g[2])


def table(sig: KernelSignature, limits: DeviceLimits) -> Choice:
    """The table's choice: by kernel name, else by kind, else DEFAULT."""
    wg, work = TABLE.get(sig.kernel) or BY_KIND.get(sig.kind) or DEFAULT
    if work not in sig.work:
        work = sig.work[0]
    return Choice(fit(wg, limits), work, "table")
