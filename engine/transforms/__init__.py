"""Graph transforms, run in one ordered list before GPU compilation.

Order matters: shape arithmetic folds first (it makes reshape targets and tile
multiples constants), then rank-5 upsampling chains collapse and LayerNorm chains fuse
(both match the op sequences the converter wrote); identities go next (they hide
fusion chances), PAD merges
before the conv's epilogue grows, constant folding before activation fusion
(folding needs a conv without activation), element-wise fusion, then what is
left of squeeze-excite gating into the next 1x1 conv's input. The fake quantization
of a quantized model (engine/transforms/quantized.py) folds into the epilogue of the
op before it ahead of the fusions, so a conv, its rounding, a residual add and the
add's rounding still become one dispatch.
`ENGINE_DEBUG=1` prints each pass's result and the op counts before/after.
"""

from __future__ import annotations

from engine.config import settings
from engine.model.ir import Graph, compact
from engine.transforms.base import PassResult
from engine.transforms.collapse_upsample import collapse_upsample
from engine.transforms.drop_identities import drop_identities
from engine.transforms.fold_constants import fold_mul_add
from engine.transforms.fold_shapes import fold_shapes
from engine.transforms.fuse import fuse_activations, fuse_elementwise, fuse_input_scale
from engine.transforms.fuse_depthwise import fuse_depthwise_conv1x1
from engine.transforms.fuse_layer_norm import fuse_layer_norm
from engine.transforms.merge_pad import merge_pad
from engine.transforms.quantized import fuse_quantize

PASSES = (
    fold_shapes,
    collapse_upsample,
    fuse_layer_norm,
    drop_identities,
    merge_pad,
    fold_mul_add,
    fuse_quantize,
    fuse_activations,
    fuse_elementwise,
    fuse_input_scale,
)
# Fusions into an op that only one optimized kernel runs, after every epilogue is final:
# engine/gpu/compile.py adds them for the optimized kernel set on the adapter classes
# whose tile table asks for them (engine/gpu/kernels/tile_tables.py FUSED_TILES).
KERNEL_PASSES = (fuse_depthwise_conv1x1,)


def run_all(graph: Graph, passes=PASSES) -> Graph:
    """Apply `passes` in order; returns the transformed graph."""
    graph, _ = run_with_log(graph, passes)
    return graph


def run_with_log(graph: Graph, passes=PASSES) -> tuple[Graph, list[PassResult]]:
    before = len(graph.ops)
    log = []
    for fn in passes:
        graph, result = fn(graph)
        log.append(result)
    graph = compact(graph)
    level = settings().debug
    if level >= 1:
        print(f"[engine] transforms on {graph.name}: {before} ops -> {len(graph.ops)} ops")
        for result in log:
            print(f"[engine]   {result}")
        if level >= 2:
            for i, op in enumerate(graph.ops):
                print(
                    f"[engine]   #{i} {op.type} {op.inputs} -> {op.outputs} {op.attrs.get('epilogue', '')}"
                )
    return graph, log
