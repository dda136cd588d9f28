"""TILE on PHWC4 buffers (rank <= 4): output (b, h, w, c) reads input (b % B, h % H,
w % W, c % C), a child of the gather template (shaders/engine/tile.wgsl) in its modes:
copy when every multiple is 1, vec4 when the channels are not tiled (then each output
vec4 is one input vec4), else one read per lane."""

from __future__ import annotations

from engine.gpu.kernels.base import BuildContext, Dispatch, Kernel, register, shape4
from engine.gpu.kernels.shape import gather_dispatch, mappable
from engine.model.ir import Graph, Op


@register
class Tile(Kernel):
    name = "tile"
    op_types = ("TILE",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        src, reps = op.inputs[0], graph.tensors[op.inputs[1]]
        return (
            reps.is_constant
            and not graph.tensors[src].is_constant
            and mappable(graph, (src, op.outputs[0]))
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        i, o = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        mode = "copy" if i == o else "vec4" if i.c == o.c else "lanes"
        return [
            gather_dispatch(
                self.name, "tile.wgsl", op, graph, ctx, op.inputs[0], op.outputs[0], mode, in_b=i.b
            )  # fmt: skip
        ]
