"""Static features of a model, as LETI uses them and as the engine would run it.

- flops: sum of engine.model.cost.op_flops over the imported graph (multiply-add = 2);
- params: float constant elements (weights and biases; batch norm folded);
- peak_memory: bytes of the engine's buffer memory plan for the intermediates of the
  transformed graph (engine.memory: usage_records at the precision's element size,
  best_plan at the adapter's offset alignment: the smallest plan of every strategy);
- dispatches: GPU dispatches of one run after fusion (dispatches.dispatch_list,
  upload/download conversions included).

    f = static_features(graph, profile, "fp32")   # {"flops", "params", "peak_memory", ...}
"""

from __future__ import annotations

from engine.latency.dispatches import AdapterProfile, dispatch_list, transformed
from engine.model.ir import Graph


def flops(graph: Graph) -> int:
    from engine.model.cost import op_flops

    return sum(op_flops(graph, op) for op in graph.ops)


def params(graph: Graph) -> int:
    from engine.model.cost import parameter_count

    return parameter_count(graph)


def peak_memory(graph: Graph, precision: str = "fp32", alignment: int = 256) -> int:
    """Bytes of the best buffer plan for the intermediates of the graph the engine runs."""
    from engine.memory import best_plan, usage_records

    records = usage_records(transformed(graph), bytes_per_element=2 if precision == "fp16" else 4)
    return best_plan(records, alignment=alignment).total_bytes if records else 0


def static_features(graph: Graph, profile: AdapterProfile, precision: str = "fp32") -> dict:
    """FLOPs, parameters, peak memory, dispatches and the dispatch list itself."""
    rows = dispatch_list(graph, profile, precision)
    return {
        "flops": flops(graph),
        "params": params(graph),
        "peak_memory": peak_memory(graph, precision, profile.alignment),
        "dispatches": len(rows),
        "dispatch_list": rows,
    }
