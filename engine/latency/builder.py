"""(cell, config) -> a stacked NAS-Bench-101 network as a graph IR and a .tflite file.

The network (NAS-Bench-101's model_builder.py, inference form):
- stem: conv3x3-bn-relu with `stem_channels` outputs;
- `num_stacks` stacks of `cells_per_stack` cells; before every stack but the first a
  2x2 stride-2 SAME max pool and the channel count doubles;
- global average pool (MEAN over H, W), dense head to `num_classes` logits.
A cell with C output channels (compute_vertex_channels):
- the C channels are split among the interior vertices that feed the output (the
  first C % k of them get one more); any other interior vertex gets the max of the
  vertices it feeds;
- an interior vertex sums its inputs (ADD, in order: interior sources first, each
  sliced to the vertex's channels when it has one more (SLICE), then a 1x1
  conv-bn-relu projection of the cell input when input feeds it) and applies its op:
  conv3x3-bn-relu / conv1x1-bn-relu (CONV_2D SAME with the batch norm folded into
  weights and bias, RELU fused) or maxpool3x3 (MAX_POOL_2D 3x3 stride 1 SAME);
- the output concatenates (CONCATENATION on channels) the vertices feeding it, plus
  (ADD) a projection of the input when input feeds output; a cell with no interior
  vertex is that projection alone.
Weights are random (He-normal, seeded by the cell hash): latency does not depend on them.

    graph = build_graph(cell, NetConfig())      # engine.model.ir.Graph
    data = build_tflite(cell, NetConfig())      # bytes, via engine.model.writer
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np

from engine.latency.cell import CONV1X1, CONV3X3, MAXPOOL3X3, Cell, CellError
from engine.model.builder import GraphBuilder
from engine.model.ir import Graph


@dataclass(frozen=True)
class NetConfig:
    """The stacked network around a cell. Defaults: a small CIFAR-like net that runs in
    ~1-3 ms on lavapipe (NAS-Bench-101 itself: stem 128, 3 stacks of 3 cells)."""

    input_size: int = 32
    input_channels: int = 3
    stem_channels: int = 16
    num_stacks: int = 3
    cells_per_stack: int = 1
    num_classes: int = 10

    def __post_init__(self) -> None:
        if min(asdict(self).values()) < 1:
            raise ValueError(f"{self}: every field must be >= 1")

    def to_dict(self) -> dict:
        return asdict(self)

    def key(self) -> str:
        """A stable string for datasets: sorted-key JSON."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict) -> NetConfig:
        return cls(**d)


def vertex_channels(in_channels: int, out_channels: int, matrix) -> list[int]:
    """Output channels of every vertex of a pruned cell (compute_vertex_channels)."""
    n = len(matrix)
    channels = [0] * n
    channels[0], channels[-1] = in_channels, out_channels
    if n == 2:
        return channels
    feeders = [v for v in range(1, n - 1) if matrix[v][n - 1]]
    base, extra = divmod(out_channels, len(feeders))
    if base == 0:
        raise CellError(f"{out_channels} channels cannot feed {len(feeders)} output vertices")
    for k, v in enumerate(feeders):
        channels[v] = base + (1 if k < extra else 0)
    for v in range(n - 3, 0, -1):
        if not matrix[v][n - 1]:
            channels[v] = max(channels[d] for d in range(v + 1, n - 1) if matrix[v][d])
    return channels


class Net(GraphBuilder):
    """Graph under construction, with NAS-Bench-101's layers; each returns its output id
    (output shapes from the op table's rules)."""

    def __init__(self, rng: np.random.Generator):
        super().__init__()
        self.rng = rng

    def conv_bn_relu(self, x: int, k: int, channels: int, name: str) -> int:
        """CONV_2D k x k SAME + folded batch norm (weights, bias) + fused RELU."""
        c = self.shape(x)[3]
        weights = self.rng.normal(0, np.sqrt(2.0 / (k * k * c)), (channels, k, k, c))
        bias = self.rng.normal(0, 0.1, channels)
        wt = self.const(weights.astype(np.float32), f"{name}/weights")
        bt = self.const(bias.astype(np.float32), f"{name}/bias")
        return self.op("CONV_2D", (x, wt, bt), name=name, padding="SAME", stride_w=1,
                       stride_h=1, fused_activation_function="RELU", dilation_w_factor=1,
                       dilation_h_factor=1)  # fmt: skip

    def max_pool(self, x: int, k: int, stride: int, name: str) -> int:
        return self.op("MAX_POOL_2D", (x,), name=name, padding="SAME", stride_w=stride,
                       stride_h=stride, filter_width=k, filter_height=k,
                       fused_activation_function="NONE")  # fmt: skip

    def add(self, a: int, b: int, name: str) -> int:
        return self.op("ADD", (a, b), name=name, fused_activation_function="NONE")

    def concat(self, xs: list[int], name: str) -> int:
        return self.op("CONCATENATION", xs, name=name, axis=3, fused_activation_function="NONE")

    def slice_channels(self, x: int, channels: int, name: str) -> int:
        b, h, w, _ = self.shape(x)
        begin = self.const(np.zeros(4, np.int32), f"{name}/begin")
        size = self.const(np.array([b, h, w, channels], np.int32), f"{name}/size")
        return self.op("SLICE", (x, begin, size), name=name)

    def mean_hw(self, x: int, name: str) -> int:
        b, _, _, c = self.shape(x)
        axes = self.const(np.array([1, 2], np.int32), f"{name}/axes")
        return self.op("MEAN", (x, axes), (b, c), name=name, keep_dims=False)

    def dense(self, x: int, units: int, name: str) -> int:
        c = self.shape(x)[1]
        weights = self.rng.normal(0, np.sqrt(1.0 / c), (units, c)).astype(np.float32)
        bias = self.rng.normal(0, 0.1, units).astype(np.float32)
        wt, bt = self.const(weights, f"{name}/weights"), self.const(bias, f"{name}/bias")
        return self.op("FULLY_CONNECTED", (x, wt, bt), name=name,
                       fused_activation_function="NONE", keep_num_dims=False)  # fmt: skip

    def cell(self, cell: Cell, x: int, channels: int, name: str) -> int:
        """One cell (module) on input `x` with `channels` output channels."""
        m, n = cell.matrix, cell.vertices
        ch = vertex_channels(self.shape(x)[3], channels, m)
        values: list[int] = [x]
        for t in range(1, n - 1):
            vname = f"{name}/vertex{t}"
            summands = []
            for s in range(1, t):
                if m[s][t]:
                    v = values[s]
                    if self.shape(v)[3] > ch[t]:  # one channel more: NAS-Bench-101 truncates
                        v = self.slice_channels(v, ch[t], f"{vname}/truncate{s}")
                    summands.append(v)
            if m[0][t]:
                summands.append(self.conv_bn_relu(x, 1, ch[t], f"{vname}/projection"))
            acc = summands[0]
            for k, v in enumerate(summands[1:], 1):
                acc = self.add(acc, v, f"{vname}/sum{k}")
            op = cell.ops[t]
            if op == CONV3X3:
                values.append(self.conv_bn_relu(acc, 3, ch[t], f"{vname}/conv3x3"))
            elif op == CONV1X1:
                values.append(self.conv_bn_relu(acc, 1, ch[t], f"{vname}/conv1x1"))
            else:
                assert op == MAXPOOL3X3, op
                values.append(self.max_pool(acc, 3, 1, f"{vname}/maxpool3x3"))
        feeding = [values[t] for t in range(1, n - 1) if m[t][n - 1]]
        if not feeding:
            return self.conv_bn_relu(x, 1, channels, f"{name}/output/projection")
        out = feeding[0] if len(feeding) == 1 else self.concat(feeding, f"{name}/output/concat")
        if m[0][n - 1]:
            proj = self.conv_bn_relu(x, 1, channels, f"{name}/output/projection")
            out = self.add(out, proj, f"{name}/output/sum")
        return out


def build_graph(cell: Cell, config: NetConfig = NetConfig(), seed: int | None = None) -> Graph:
    """The network of `cell` (pruned first) under `config`; weights seeded by the hash."""
    pruned = cell.pruned()
    if pruned is None:
        raise CellError(f"input does not reach output: {cell.matrix}")
    h = pruned.hash()
    net = Net(np.random.default_rng(int(h[:8], 16) if seed is None else seed))
    c = config
    x = net.tensor((1, c.input_size, c.input_size, c.input_channels), name="input")
    y = net.conv_bn_relu(x, 3, c.stem_channels, "stem")
    channels = c.stem_channels
    for s in range(c.num_stacks):
        if s > 0:
            y = net.max_pool(y, 2, 2, f"stack{s}/downsample")
            channels *= 2
        for k in range(c.cells_per_stack):
            y = net.cell(pruned, y, channels, f"stack{s}/cell{k}")
    y = net.mean_hw(y, "global_pool")
    y = net.dense(y, c.num_classes, "logits")
    return net.graph([x], [y], name=f"nasbench101:{h}")


def build_tflite(cell: Cell, config: NetConfig = NetConfig(), seed: int | None = None) -> bytes:
    """The .tflite flatbuffer of build_graph(cell, config)."""
    from engine.model.writer import write_tflite

    graph = build_graph(cell, config, seed)
    return write_tflite(graph, description=graph.name)
