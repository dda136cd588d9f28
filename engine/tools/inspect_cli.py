"""engine-inspect: what a .tflite model holds and costs, without running it.

Prints inputs/outputs with shapes, the op histogram, parameter count, FLOPs
per op and in total (multiply-add = 2), intermediate tensor bytes and, with
--memory, the memory plan of every planner strategy. --json for machines.

usage: engine-inspect MODEL [--json] [--memory] [--top N]
"""

from __future__ import annotations

import argparse
import json
import sys

from engine.errors import EngineError
from engine.model.cost import flops_by_op, intermediate_bytes, parameter_count
from engine.model.importer import load_tflite
from engine.model.ir import Graph


def _io(graph: Graph, ids: list[int]) -> list[dict]:
    return [
        {
            "name": graph.tensors[i].name,
            "shape": list(graph.tensors[i].shape),
            "dtype": graph.tensors[i].dtype,
        }
        for i in ids
    ]


def summarize(graph: Graph, with_memory: bool = False) -> dict:
    """Everything engine-inspect reports, as plain data."""
    per_op = flops_by_op(graph)
    report = {
        "model": graph.name,
        "inputs": _io(graph, graph.inputs),
        "outputs": _io(graph, graph.outputs),
        "op_count": len(graph.ops),
        "op_histogram": graph.op_histogram(),
        "custom_ops": sorted({op.type for op in graph.ops if op.custom}),
        "parameters": parameter_count(graph),
        "flops": sum(r.flops for r in per_op),
        "flops_per_op": [
            {"index": r.index, "op": r.type, "output": r.output, "flops": r.flops} for r in per_op
        ],
        "intermediate_bytes": intermediate_bytes(graph),
    }
    if with_memory:
        report["memory"] = _memory_report(graph)
    return report


def _memory_report(graph: Graph) -> list[dict]:
    from engine.memory import plan_all, usage_records
    from engine.transforms import run_all

    graph = run_all(graph)  # plan what the engine runs: fused-away tensors do not count
    report = []
    for precision, width in (("fp32", 4), ("fp16", 2)):
        for stats in plan_all(usage_records(graph, bytes_per_element=width)):
            report.append({"precision": precision, **stats.as_dict()})
    return report


def _print_text(report: dict, top: int) -> None:
    p = print
    p(f"model: {report['model']}")
    for kind in ("inputs", "outputs"):
        for t in report[kind]:
            p(f"  {kind[:-1]:6} {t['name']:32} {str(tuple(t['shape'])):22} {t['dtype']}")
    p(f"ops: {report['op_count']}")
    for name, count in report["op_histogram"].items():
        p(f"  {name:32} {count:5}")
    if report["custom_ops"]:
        p(f"custom ops: {', '.join(report['custom_ops'])}")
    p(f"parameters: {report['parameters']:,}")
    p(f"FLOPs: {report['flops']:,} ({report['flops'] / 1e9:.4f} GFLOP, multiply-add = 2)")
    p(f"intermediate tensor bytes: {report['intermediate_bytes']:,}")
    heavy = sorted(report["flops_per_op"], key=lambda r: -r["flops"])[:top]
    p(f"top {len(heavy)} ops by FLOPs:")
    for r in heavy:
        share = 100 * r["flops"] / max(1, report["flops"])
        p(f"  #{r['index']:<4} {r['op']:24} {r['flops']:>14,} {share:5.1f}%  {r['output']}")
    if "memory" in report:
        from engine.memory import format_table

        p("memory plans (intermediate tensors, PHWC4):")
        p(format_table(report["memory"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="engine-inspect", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="path to a .tflite file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--memory", action="store_true", help="plan intermediate memory with every strategy"
    )
    parser.add_argument(
        "--top", type=int, default=10, help="how many of the heaviest ops to list (default 10)"
    )
    args = parser.parse_args(argv)
    try:
        report = summarize(load_tflite(args.model), with_memory=args.memory)
    except EngineError as exc:
        print(f"engine-inspect: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        _print_text(report, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
