"""Generated single-layer models: per-kernel training data beyond what NAS cells contain.

nn-Meter's kernel-level idea: sample each kernel's configuration space and measure
it, so the dispatch-level predictor has data for kernels NAS-Bench-101 cells never
use (depthwise convolutions, strided convolutions, resizes, element-wise ops with
their fused forms, global pools). Every model is generated here from random shapes:
no MediaPipe model or layer goes into it. A family is one small graph pattern:

| family | graph |
|---|---|
| depthwise | DEPTHWISE_CONV_2D k3/k5, stride 1/2, RELU/RELU6/none |
| conv1x1 | CONV_2D 1x1, optionally + a residual ADD (fused into its epilogue) |
| conv3x3 | CONV_2D 3x3 stride 1/2 |
| conv_prelu | CONV_2D 1x1 + PRELU (fused) |
| max_pool | MAX_POOL_2D 2x2 stride 2 |
| global_pool | AVERAGE_POOL_2D over the whole input (squeeze-excite's pool) |
| gate | MUL by a per-channel [1,1,1,C] tensor (squeeze-excite's gate) |
| binary | ADD / MUL of two full tensors |
| resize | RESIZE_BILINEAR x2 |
| concat | CONCATENATION of two tensors |

Shapes: H = W in SIZES, channels in CHANNELS, drawn until the layer's FLOPs are at
most MAX_FLOPS and its output at most MAX_OUTPUT elements (a single layer then runs in well under 20 ms on lavapipe).

    jobs = kernel_graphs(200, seed=0)    # [(family, Graph)]
"""

from __future__ import annotations

import hashlib

import numpy as np

from engine.latency.builder import Net
from engine.model.ir import Graph

SIZES = (8, 12, 16, 24, 32, 48, 64, 96, 128)
CHANNELS = (4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
MAX_FLOPS = 150e6  # lavapipe runs ~5-10 GFLOP/s in conv kernels (docs/benchmarks.md)
# The engine's output conversion dispatches ceil(elements / 64) work groups along x
# (engine/gpu/engine.py _prepare_io), over WebGPU's 65535 per dimension above 4.19M
# elements: a 128x128x256 input resized x2 failed validation. Stay below.
MAX_OUTPUT = 64 * 65535
FAMILIES = ("depthwise", "conv1x1", "conv3x3", "conv_prelu", "max_pool", "global_pool",
            "gate", "binary", "resize", "concat")  # fmt: skip
ACTS = ("NONE", "RELU", "RELU6")


class _KernelNet(Net):
    def depthwise(self, x: int, k: int, stride: int, act: str) -> int:
        c = self.shape(x)[3]
        wt = self.const(self.rng.normal(0, np.sqrt(2 / (k * k)), (1, k, k, c)).astype(np.float32),
                        "dw/weights")  # fmt: skip
        bt = self.const(self.rng.normal(0, 0.1, c).astype(np.float32), "dw/bias")
        return self.op("DEPTHWISE_CONV_2D", (x, wt, bt), name="dw", padding="SAME",
                       stride_w=stride, stride_h=stride, depth_multiplier=1,
                       fused_activation_function=act, dilation_w_factor=1,
                       dilation_h_factor=1)  # fmt: skip

    def conv(self, x: int, k: int, stride: int, channels: int, act: str) -> int:
        c = self.shape(x)[3]
        weights = self.rng.normal(0, np.sqrt(2.0 / (k * k * c)), (channels, k, k, c))
        wt = self.const(weights.astype(np.float32), "conv/weights")
        bt = self.const(self.rng.normal(0, 0.1, channels).astype(np.float32), "conv/bias")
        return self.op("CONV_2D", (x, wt, bt), name="conv", padding="SAME", stride_w=stride,
                       stride_h=stride, fused_activation_function=act, dilation_w_factor=1,
                       dilation_h_factor=1)  # fmt: skip

    def binary(self, kind: str, a: int, b: int) -> int:
        return self.op(kind, (a, b), name=kind.lower(), fused_activation_function="NONE")


def _flops(g: Graph) -> int:
    from engine.model.cost import op_flops

    return sum(op_flops(g, op) for op in g.ops)


def kernel_graph(family: str, rng: np.random.Generator) -> Graph:
    """One random single-layer graph of `family` (see the module docstring)."""
    n = _KernelNet(rng)
    size = int(rng.choice(SIZES))
    c = int(rng.choice(CHANNELS))
    act = str(rng.choice(ACTS))
    x = n.tensor((1, size, size, c), name="input")
    inputs = [x]
    if family == "depthwise":
        y = n.depthwise(x, int(rng.choice([3, 5])), int(rng.choice([1, 2])), act)
    elif family in ("conv1x1", "conv_prelu"):
        cout = int(rng.choice(CHANNELS))
        y = n.conv(x, 1, 1, cout, "NONE" if family == "conv_prelu" else act)
        if family == "conv_prelu":
            alpha = n.const(rng.uniform(0, 0.3, (1, 1, cout)).astype(np.float32), "alpha")
            y = n.op("PRELU", (y, alpha), name="prelu")
        elif rng.random() < 0.5:
            r = n.tensor(n.shape(y), name="residual")
            inputs.append(r)
            y = n.binary("ADD", y, r)
    elif family == "conv3x3":
        y = n.conv(x, 3, int(rng.choice([1, 2])), int(rng.choice(CHANNELS)), act)
    elif family == "max_pool":
        y = n.max_pool(x, 2, 2, "pool")
    elif family == "global_pool":
        y = n.op("AVERAGE_POOL_2D", (x,), name="gap", padding="VALID", stride_w=size,
                 stride_h=size, filter_width=size, filter_height=size,
                 fused_activation_function="NONE")  # fmt: skip
    elif family == "gate":
        g = n.tensor((1, 1, 1, c), name="gate")
        inputs.append(g)
        y = n.binary("MUL", x, g)
    elif family == "binary":
        other = n.tensor(n.shape(x), name="other")
        inputs.append(other)
        y = n.binary(str(rng.choice(["ADD", "MUL"])), x, other)
    elif family == "resize":
        size2 = n.const(np.array([2 * size, 2 * size], np.int32), "size")
        y = n.op("RESIZE_BILINEAR", (x, size2), name="resize",
                 align_corners=False, half_pixel_centers=True)  # fmt: skip
    elif family == "concat":
        other = n.tensor((1, size, size, int(rng.choice(CHANNELS))), name="other")
        inputs.append(other)
        y = n.concat([x, other], "concat")
    else:
        raise ValueError(f"unknown kernel family {family!r}; one of {FAMILIES}")
    return n.graph(inputs, [y], name=f"kernel:{family}")


def kernel_graphs(count: int, seed: int = 0) -> list[tuple[str, str, Graph]]:
    """`count` (family, key, graph): families in turn, shapes redrawn while over MAX_FLOPS;
    the key hashes the graph's structure (ops, shapes, attributes)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        family = FAMILIES[i % len(FAMILIES)]
        while True:
            g = kernel_graph(family, rng)
            if _flops(g) <= MAX_FLOPS and g.tensors[g.outputs[0]].size <= MAX_OUTPUT:
                break
        desc = repr([(op.type, [g.tensors[t].shape for t in op.inputs], op.attrs) for op in g.ops])
        out.append((family, hashlib.md5(f"{i}:{desc}".encode()).hexdigest(), g))
    return out


def kernel_job(key: str, graph: Graph):
    """A generated layer as a measure.Job (engine-latency measure --kernels, calibrate)."""
    from engine.latency import measure
    from engine.model.writer import write_tflite

    return measure.Job(key, graph, write_tflite(graph), model=graph.name, sample="kernel")
