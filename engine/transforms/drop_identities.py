"""Drop ops that do nothing to the PHWC4 data.

- RESHAPE whose input and output map to the same PHWC4 shape (e.g. [1,1,1,C] ->
  [1,C]), when every reader is layout-agnostic (no axis attribute that would
  change meaning with the rank);
- ADD / CONCATENATION with a single input and no activation;
- RESIZE_* whose output size equals its input size.
Declined: the op's output is a graph output (its name must survive).
"""

from __future__ import annotations

from engine.model.ir import Graph
from engine.model.layout import phwc4_shape
from engine.model.op_specs import SPECS
from engine.transforms.base import PassResult, drop_op, mappable

# Readers that see a tensor only through its PHWC4 layout.
_LAYOUT_AGNOSTIC = {name for name, spec in SPECS.items() if spec.layout_only}


def _identity_source(graph: Graph, i: int) -> tuple[int | None, str]:
    op = graph.ops[i]
    inputs = [t for t in op.inputs if t >= 0]
    act = op.attrs.get("fused_activation_function", "NONE")
    if op.type == "RESHAPE":
        src, dst = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        if not mappable(graph, op.inputs[0], op.outputs[0]):
            return None, ""  # rank > 4: a real reshape (or one collapse_upsample rewrote)
        if phwc4_shape(src.shape) != phwc4_shape(dst.shape):
            return None, ""
        readers = graph.consumers().get(op.outputs[0], [])
        if any(graph.ops[r].type not in _LAYOUT_AGNOSTIC for r in readers):
            return None, f"#{i} RESHAPE feeds an axis-sensitive op"
        return op.inputs[0], ""
    if op.type in ("ADD", "CONCATENATION") and len(inputs) == 1 and act == "NONE":
        return inputs[0], ""
    if op.type.startswith("RESIZE_"):
        if graph.tensors[op.inputs[0]].shape == graph.tensors[op.outputs[0]].shape:
            return op.inputs[0], ""
    return None, ""


def drop_identities(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("drop_identities")
    i = 0
    while i < len(graph.ops):
        source, why = _identity_source(graph, i)
        if why:
            result.declined.append(why)
        if source is not None:
            if graph.ops[i].outputs[0] in graph.outputs:
                result.declined.append(f"#{i} {graph.ops[i].type} writes a graph output")
            elif graph.tensors[source].is_constant:
                result.declined.append(f"#{i} {graph.ops[i].type} of a constant")
            else:
                graph = drop_op(graph, i, source)
                result.applied += 1
                continue
        i += 1
    return graph, result
