"""MobileNetV1/V2 and DeepLabV3 shaped graphs for the memory benchmark (no weights).

Graph IR as the engine runs it after its transforms: batch norm folded and activations
fused into the convs, residual adds fused into the projecting 1x1 conv (it reads the
block input as an epilogue operand), so each op writes one tensor. Shapes follow the
papers (NHWC, batch 1); only shapes and who reads what matter to a memory plan.

- mobilenet_v1(224): Howard et al. 2017, table 1 (alpha 1);
- mobilenet_v2(224): Sandler et al. 2018, table 2 (alpha 1);
- deeplab_v3(513, output_stride=16, aspp="full"): Chen et al. 2017 on a MobileNetV2
  backbone, the last strided stage dilated instead; ASPP: 1x1 conv, three 3x3 atrous
  convs and image pooling, concatenated, 1x1 conv, logits, bilinear upsampling;
- deeplab_v3(257, output_stride=8, aspp="mobile"): the TFLite mobile DeepLabV3
  (deeplabv3_257_mv_gpu): ASPP is the 1x1 conv and image pooling branches only.
"""

from __future__ import annotations

from engine.model.builder import GraphBuilder
from engine.model.ir import Graph


class _Builder(GraphBuilder):
    """The graph builder with one [1, side, side, 3] input and weightless convs."""

    def __init__(self, name: str, side: int):
        super().__init__(name)
        self.tensor((1, side, side, 3), name="input")

    def conv(self, x: int, channels: int, stride: int = 1, kind: str = "CONV_2D", **attrs) -> int:
        _, h, w, c = self.shape(x)
        shape = (1, -(-h // stride), -(-w // stride), c if kind.startswith("DEPTH") else channels)
        return self.op(kind, (x,), shape, **attrs)


def mobilenet_v1(side: int = 224) -> Graph:
    b = _Builder("mobilenet_v1", side)
    x = b.conv(0, 32, 2)
    for channels, stride in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                             *[(512, 1)] * 5, (1024, 2), (1024, 1)):  # fmt: skip
        x = b.conv(b.conv(x, 0, stride, "DEPTHWISE_CONV_2D"), channels)
    x = b.op("MEAN", (x,), (1, 1, 1, 1024))
    x = b.conv(x, 1000)
    return b.graph([0], [b.op("SOFTMAX", (b.op("RESHAPE", (x,), (1, 1000)),), (1, 1000))])


def _inverted_residuals(b: _Builder, output_stride: int = 32) -> int:
    """MobileNetV2's stem and body on the input; past `output_stride` the strides become
    dilations."""
    x = b.conv(0, 32, 2)
    stride_so_far = 2
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):  # fmt: skip
        for i in range(n):
            stride = s if i == 0 else 1
            if stride_so_far * stride > output_stride:
                stride = 1
            stride_so_far *= stride
            cin = b.shape(x)[3]
            y = b.conv(x, cin * t) if t > 1 else x
            y = b.conv(y, 0, stride, "DEPTHWISE_CONV_2D")
            if stride == 1 and cin == c:  # the residual add, fused into the projection
                y = b.op("CONV_2D", (y,), b.shape(x), epilogue=(("add", x),))
            else:
                y = b.conv(y, c)
            x = y
    return x


def mobilenet_v2(side: int = 224) -> Graph:
    b = _Builder("mobilenet_v2", side)
    x = b.conv(_inverted_residuals(b), 1280)
    x = b.op("MEAN", (x,), (1, 1, 1, 1280))
    x = b.conv(x, 1000)
    return b.graph([0], [b.op("SOFTMAX", (b.op("RESHAPE", (x,), (1, 1000)),), (1, 1000))])


def deeplab_v3(side: int = 513, output_stride: int = 16, aspp: str = "full") -> Graph:
    b = _Builder(f"deeplab_v3_{side}_os{output_stride}_{aspp}", side)
    x = _inverted_residuals(b, output_stride)
    _, h, w, _ = b.shape(x)
    pooled = b.conv(b.op("MEAN", (x,), (1, 1, 1, 320)), 256)
    branches = [b.conv(x, 256)]
    if aspp == "full":
        branches += [b.conv(x, 256, dilation=rate) for rate in (6, 12, 18)]
    branches.append(b.op("RESIZE_BILINEAR", (pooled,), (1, h, w, 256)))
    x = b.op("CONCATENATION", tuple(branches), (1, h, w, 256 * len(branches)))
    x = b.conv(b.conv(x, 256), 21)
    return b.graph([0], [b.op("RESIZE_BILINEAR", (x,), (1, side, side, 21))])


GRAPHS = {
    "mobilenet_v1": mobilenet_v1,
    "mobilenet_v2": mobilenet_v2,
    "deeplab_v3_513_os16": lambda: deeplab_v3(513, 16, "full"),
    "deeplab_v3_257_os8": lambda: deeplab_v3(257, 8, "mobile"),
}
