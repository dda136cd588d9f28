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

from engine.model.ir import Graph, Op, Tensor
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
    """A graph with one op; output shapes come from the reference kernel run on zeros."""
    tensors: list[Tensor] = []
    ids: list[int] = []
    graph_inputs: list[int] = []
    for k, spec in enumerate(inputs):
        if spec is None:
            ids.append(-1)
            continue
        if isinstance(spec, np.ndarray):
            data = spec if spec.dtype != np.float64 else spec.astype(np.float32)
            tensors.append(Tensor(f"const{k}", tuple(data.shape), data.dtype.name, data))
        else:
            tensors.append(Tensor(f"input{k}", tuple(spec), "float32"))
            graph_inputs.append(len(tensors) - 1)
        ids.append(len(tensors) - 1)
    if out_shapes is None:
        probe = Op(op_type, tuple(ids), tuple(range(num_outputs)), dict(attrs or {}), custom)
        zeros = [
            None
            if i < 0
            else tensors[i].data
            if tensors[i].is_constant
            else np.zeros(tensors[i].shape, np.float32)
            for i in ids
        ]
        fn = registry.kernel(op_type)
        if fn is None:
            raise KeyError(f"no reference kernel for {op_type}")
        probed = [np.asarray(y) for y in fn(probe, zeros)]
        out_shapes = [y.shape for y in probed]
        # Integer / bool results (SHAPE, shape arithmetic on int constants) keep their type.
        out_dtypes = [y.dtype.name if y.dtype.kind in "iub" else "float32" for y in probed]
    else:
        out_dtypes = ["float32"] * len(out_shapes)
    outs = []
    for k, shape in enumerate(out_shapes):
        tensors.append(Tensor(f"output{k}", tuple(shape), out_dtypes[k]))
        outs.append(len(tensors) - 1)
    op = Op(op_type, tuple(ids), tuple(outs), dict(attrs or {}), custom)
    return Graph(tensors, [op], graph_inputs, outs, name=f"single_op:{op_type}")


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
