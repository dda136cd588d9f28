"""Single-op test models: build a one-op Graph, run it on LiteRT and on the reference.

Reused by the GPU kernel tests: build the graph once, compare any two executors.
Usage:
    g = single_op_graph("CONV_2D", [(1, 8, 8, 3), w, b], {"padding": "SAME", ...})
    feeds = random_feeds(g, rng)
    assert_close(run_litert(g, feeds), Interpreter(g).run(feeds))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.model.builder import GraphBuilder
from engine.model.ir import Graph, Op
from engine.reference import registry

# An entry of `inputs`: a shape (a float32 graph input), an array (a constant), or
# None (an omitted optional input, id -1).
InputSpec = tuple[int, ...] | np.ndarray | None


def single_op_graph(
    op_type: str,
    inputs: Sequence[InputSpec],
    attrs: dict | None = None,
    *,
    custom: bool = False,
    num_outputs: int = 1,
    out_shapes: Sequence[tuple[int, ...]] | None = None,
) -> Graph:
    """A graph with one op; output shapes from the op table's rule, else the reference kernel
    run on zeros (engine/reference/registry.py output_types)."""
    b = GraphBuilder()
    ids: list[int] = []
    graph_inputs: list[int] = []
    for k, spec in enumerate(inputs):
        if spec is None:
            ids.append(-1)
        elif isinstance(spec, np.ndarray):
            data = spec if spec.dtype != np.float64 else spec.astype(np.float32)
            ids.append(b.const(data, f"const{k}"))
        else:
            ids.append(b.tensor(spec, name=f"input{k}"))
            graph_inputs.append(ids[-1])
    if out_shapes is None:
        probe = Op(op_type, tuple(ids), tuple(range(num_outputs)), dict(attrs or {}), custom)
        types = registry.output_types(probe, [b.tensors[i] if i >= 0 else None for i in ids])
        out_shapes = [shape for shape, _ in types]
        # Integer / bool results (SHAPE, shape arithmetic on int constants) keep their type.
        out_dtypes = [d if np.dtype(d).kind in "iub" else "float32" for _, d in types]
    else:
        out_dtypes = ["float32"] * len(out_shapes)
    outs = [b.tensor(shape, name=f"output{k}", dtype=d)
            for k, (shape, d) in enumerate(zip(out_shapes, out_dtypes, strict=True))]  # fmt: skip
    b.add_op(Op(op_type, tuple(ids), tuple(outs), dict(attrs or {}), custom))
    return b.graph(graph_inputs, outs, name=f"single_op:{op_type}")


def random_feeds(graph: Graph, rng: np.random.Generator, scale: float = 1.0) -> dict:
    """Uniform [-scale, scale) float32 values for every graph input, by name."""
    return {
        graph.tensors[t].name: (rng.uniform(-scale, scale, graph.tensors[t].shape)).astype(
            np.float32
        )
        for t in graph.inputs
    }


# Ops that LiteRT's BUILTIN_REF resolver lacks: compared with its optimized builtin
# kernels (no delegate) instead.
NO_LITERT_REFERENCE_KERNEL = {"ELU"}


def run_litert(graph: Graph, feeds: dict, kernels: str = "reference") -> dict:
    """Run `graph` on LiteRT with its "reference" kernels (BUILTIN_REF: the semantics),
    its optimized "builtin" kernels, or the default "xnnpack" delegate path."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from engine.model.writer import write_tflite

    resolver = {
        "reference": OpResolverType.BUILTIN_REF,
        "builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        "xnnpack": OpResolverType.AUTO,
    }[kernels]
    it = Interpreter(model_content=write_tflite(graph), experimental_op_resolver_type=resolver)
    it.allocate_tensors()
    by_name = {d["name"]: d["index"] for d in it.get_input_details()}
    for name, value in feeds.items():
        it.set_tensor(by_name[name], value)
    it.invoke()
    return {d["name"]: it.get_tensor(d["index"]).copy() for d in it.get_output_details()}


def max_error(ref: np.ndarray, got: np.ndarray) -> float:
    """max|got - ref| / max(1, max|ref|): the relative error the tests bound."""
    ref, got = np.asarray(ref, np.float64), np.asarray(got, np.float64)
    if ref.shape != got.shape:
        raise AssertionError(f"shape {got.shape} != reference {ref.shape}")
    if ref.size == 0:
        return 0.0
    return float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))


def assert_close(ref: dict, got: dict, tol: float = 1e-5) -> None:
    """Every output within `tol` relative error (see max_error)."""
    assert ref.keys() == got.keys(), (sorted(ref), sorted(got))
    for name in ref:
        err = max_error(ref[name], got[name])
        assert err <= tol, f"{name}: error {err:.3g} > {tol:g}"


def compare_with_litert(graph: Graph, feeds: dict, tol: float = 1e-5, xnnpack: bool = True):
    """Reference interpreter (float32 and float64) vs LiteRT's reference kernels and, when
    `xnnpack`, vs LiteRT's default optimized kernels. Returns the float64 outputs."""
    from engine.reference import Interpreter

    got64 = Interpreter(graph, np.float64).run(feeds)
    got32 = Interpreter(graph, np.float32).run(feeds)
    for got, dtype in ((got32, np.float32), (got64, np.float64)):  # no silent precision change
        assert all(v.dtype == dtype for v in got.values()), {k: v.dtype for k, v in got.items()}
    missing = any(op.type in NO_LITERT_REFERENCE_KERNEL for op in graph.ops)
    ref = run_litert(graph, feeds, "builtin" if missing else "reference")
    assert_close(ref, got32, tol)
    assert_close(ref, got64, tol)
    if xnnpack:
        assert_close(run_litert(graph, feeds, "xnnpack"), got64, tol)
    return got64
