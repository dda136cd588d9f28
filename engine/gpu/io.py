"""Tensors between numpy (HWC float32) and the GPU's PHWC4 storage.

- `GraphIO`: per graph input a raw HWC staging buffer and an HWC -> PHWC4 dispatch, per
  output a PHWC4 -> HWC dispatch into a raw buffer, copied into its slot of one mappable
  buffer; run() writes, records and reads through them (one upload per input, one map
  per run: each map is a round trip through wgpu's poll thread, and on SwiftShader a
  second map cost 3-6% of a face model's run);
- `check_feeds`: numpy inputs by name or in order, checked against the graph;
- `read_phwc4` / `read_tensor` / `write_tensor`: one tensor's stored PHWC4 data from or
  into its buffer or texture (the CPU fallback and tests; each is a transfer).
"""

from __future__ import annotations

import numpy as np

from engine.gpu import quant_io
from engine.gpu.kernels.base import Binding, Dispatch, Shape4, ceil_div, shape4
from engine.gpu.resources import Prepared, Resources
from engine.gpu.storage import View, read_texels, write_tensor_texels
from engine.model.ir import Graph


class GraphIO:
    """Staging buffers and conversion dispatches of the graph's inputs and outputs."""

    def __init__(self, res: Resources):
        import wgpu

        self.res, g = res, res.program.graph
        dev = res.device
        self.inputs: dict[int, tuple[object, Prepared]] = {}  # raw, HWC -> PHWC4
        # per output: raw HWC buffer, its offset in `self.read`, PHWC4 -> HWC dispatch
        self.outputs: dict[int, tuple[object, int, Prepared]] = {}
        for t in g.inputs:
            s4 = shape4(g, t)
            raw = dev.create_buffer(size=_hwc_bytes(s4), usage=wgpu.BufferUsage.STORAGE
                                    | wgpu.BufferUsage.COPY_DST)  # fmt: skip
            convert = self._convert("hwc_to_phwc4.wgsl", s4, raw, res.buffers[t])
            self.inputs[t] = (raw, convert)
        offset = 0
        for t in g.outputs:
            s4 = shape4(g, t)
            nbytes = _hwc_bytes(s4)
            raw = dev.create_buffer(size=nbytes, usage=wgpu.BufferUsage.STORAGE
                                    | wgpu.BufferUsage.COPY_SRC)  # fmt: skip
            convert = self._convert("phwc4_to_hwc.wgsl", s4, res.buffers[t], raw)
            self.outputs[t] = (raw, offset, convert)
            offset += ceil_div(nbytes, READ_ALIGN) * READ_ALIGN
        self.read = dev.create_buffer(size=max(offset, READ_ALIGN), usage=wgpu.BufferUsage.MAP_READ
                                      | wgpu.BufferUsage.COPY_DST)  # fmt: skip

    def _convert(self, template: str, s4: Shape4, src, dst) -> Prepared:
        """A conversion dispatch; `src`/`dst` are Views or whole raw buffers."""
        res = self.res
        d = conversion(template, s4, res.precision.name, res.program.arena)
        views = [x if isinstance(x, View) else View(x, 0, x.size) for x in (src, dst)]
        return res.prepare_raw(d.source, template, views, d.workgroups)

    def upload(self, values: dict[int, np.ndarray]) -> None:
        for t, a in values.items():
            self.res.device.queue.write_buffer(self.inputs[t][0], 0, a)

    def copy_outputs(self, encoder) -> None:
        """After the output conversions: copy each raw output into its slot of `read`."""
        for raw, offset, _ in self.outputs.values():
            encoder.copy_buffer_to_buffer(raw, 0, self.read, offset, raw.size)

    def readable(self) -> list:
        return [self.read]

    def read_outputs(self) -> dict[str, np.ndarray]:
        """The mapped outputs by name (one read_mapped copy of them all), unmapped after;
        an int8 output of a quantized model in its integer type (quant_io.py)."""
        g, result = self.res.program.graph, {}
        integer_io = self.res.program.integer_io
        mapped = self.read.read_mapped()
        self.read.unmap()
        for t, (_, offset, _) in self.outputs.items():
            name, shape = g.tensors[t].name, g.tensors[t].shape
            n = int(np.prod(shape))
            result[name] = np.frombuffer(mapped, np.float32, n, offset).reshape(shape)
            if name in integer_io:
                result[name] = quant_io.to_integer(result[name], *integer_io[name])
        return result


def check_feeds(graph: Graph, feeds, integer_io: dict | None = None) -> dict[int, np.ndarray]:
    """Inputs by name (or in order) as contiguous float32 arrays keyed by tensor id (an
    int8 feed of a quantized model as its real values, `integer_io`: quant_io.py);
    ValueError naming the input for a missing, unknown or misshapen one."""
    names = {graph.tensors[t].name: t for t in graph.inputs}
    if not isinstance(feeds, dict):
        feeds = dict(zip(names, feeds, strict=False))
    out = {}
    for name, t in names.items():
        if name not in feeds:
            raise ValueError(f"missing input '{name}' (inputs: {list(names)})")
        a = np.asarray(feeds[name])
        if integer_io and name in integer_io:  # int8 feed of a quantized model
            a = quant_io.to_real(name, a, *integer_io[name])
        want = graph.tensors[t].shape
        if a.shape != want:
            raise ValueError(f"input '{name}': shape {a.shape}, expected {want}")
        if a.dtype.kind != "f":
            raise ValueError(f"input '{name}': dtype {a.dtype}, expected float32")
        out[t] = np.ascontiguousarray(a, np.float32)
    extra = set(feeds) - set(names)
    if extra:
        raise ValueError(f"unknown inputs {sorted(extra)} (inputs: {list(names)})")
    return out


def read_phwc4(res: Resources, t: int) -> np.ndarray:
    """Tensor t's stored PHWC4 data, [slices, B*H, W, 4] in the storage type (padded
    lanes included), from its buffer or texture: one readback."""
    s4 = shape4(res.program.graph, t)
    dt = res.precision.dtype
    if t in res.textures:
        return read_texels(res.device, res.textures[t], dt)
    view = res.buffers[t]
    raw = res.device.queue.read_buffer(view.buffer, view.offset, view.size)
    return np.frombuffer(raw, dt, s4.vec4_count * 4).reshape(s4.s, s4.rows, s4.w, 4)


def read_tensor(res: Resources, t: int) -> np.ndarray:
    """Tensor t as float32 in its model shape (constants from the graph, no transfer)."""
    tensor = res.program.graph.tensors[t]
    if tensor.is_constant:
        return tensor.data
    s4 = shape4(res.program.graph, t)
    hwc = read_phwc4(res, t).transpose(1, 2, 0, 3).reshape(s4.rows, s4.w, s4.s * 4)
    return hwc[:, :, : s4.c].astype(np.float32).reshape(tensor.shape)


def write_tensor(res: Resources, t: int, value: np.ndarray) -> None:
    """`value` (model shape) into tensor t's buffer or texture, PHWC4, zero padded."""
    s4 = shape4(res.program.graph, t)
    hwc = np.zeros((s4.rows, s4.w, s4.s * 4), res.precision.dtype)
    hwc[:, :, : s4.c] = np.asarray(value).reshape(s4.rows, s4.w, s4.c)
    phwc4 = np.ascontiguousarray(hwc.reshape(s4.rows, s4.w, s4.s, 4).transpose(2, 0, 1, 3))
    if t in res.textures:
        write_tensor_texels(res.device, res.textures[t], phwc4)
        return
    view = res.buffers[t]
    res.device.queue.write_buffer(view.buffer, view.offset, phwc4)


IO_GROUP = 64  # invocations per group of the conversion shaders
READ_ALIGN = 256  # each output's slot in the mappable buffer (copies need 4-byte offsets)
MAX_ROW_GROUPS = 32768  # groups along x, under WebGPU's 65535 per dimension


def conversion(template: str, s4: Shape4, precision: str, arena: bool = False) -> Dispatch:
    """The upload (hwc_to_phwc4.wgsl: a raw row-major float32 [rows, W, C] buffer into
    PHWC4) or download (phwc4_to_hwc.wgsl: back) of a tensor of geometry `s4`."""
    upload = template.startswith("hwc")
    grid = conversion_grid(s4.vec4_count if upload else s4.rows * s4.w * s4.c)
    params = dict(precision=precision, rows=s4.rows, w=s4.w, s=s4.s, c=s4.c,
                  row_invocations=grid[0] * IO_GROUP)  # fmt: skip
    raw, phwc4 = "array<f32>", "array<vec4<T>>"  # the views GraphIO binds to them
    bindings = (
        (Binding("in", name="raw", type=raw), Binding("out", name="dst", type=phwc4)) if upload
        else (Binding("in", name="src", type=phwc4), Binding("out", name="raw", type=raw))
    )  # fmt: skip
    kernel = template.removesuffix(".wgsl")
    return Dispatch(kernel, template, params, bindings, (IO_GROUP, 1, 1), grid, arena)


def conversion_grid(count: int) -> tuple[int, int, int]:
    """Work groups of a conversion over `count` elements: one row of up to MAX_ROW_GROUPS
    groups, more rows when a tensor needs more (a 1x128x128x256 output: 65536 groups)."""
    groups = ceil_div(count, IO_GROUP)
    x = min(groups, MAX_ROW_GROUPS)
    return (x, ceil_div(groups, x), 1)


def _hwc_bytes(s4: Shape4) -> int:
    return max(16, s4.rows * s4.w * s4.c * 4)
