"""The staged start: `Engine(kernels="staged")` answers from the compact kernel set at once and
swaps in the optimized set, built on a worker thread, between two runs once it is ready.

- why: the optimized set compiles 3-10x longer than the compact one (docs/benchmarks.md,
  "fresh process to a first result"), the compact set runs 2.6-5.4x slower; a program that
  wants a first result soon and full speed after gets both;
- what a caller sees: `run()` gives the compact set's outputs until the swap and the
  optimized set's after it, each exactly what an engine of that set gives
  (tests/gpu/test_staged.py); the sets differ by float rounding (up to ~7e-5 on the app's
  models), which is why staged is an option and not the default: the default gives the
  same outputs on every run of a process;
- `engine.kernels_running` says which set the last run used, `engine.optimized_ready()`
  whether the swap was made, `engine.wait_optimized(timeout)` blocks until it is;
- on lavapipe shaders compile at their first dispatch: the worker runs each optimized
  pipeline once on a scratch device of the same adapter (warmup.py), so Mesa's disk cache
  holds them before the swap and the caller's queue never waits for LLVM;
- a failed optimized build keeps the compact set (right, slower) and says why in
  `engine.staged_error` and a warning;
- `encode()` and `tensor_layout()` hand out buffers that the swap replaces: a staged engine
  refuses them (use "compact" or "optimized" for the encode path).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

from engine.gpu.background import BackgroundBuild
from engine.gpu.compile import KERNEL_SETS, compile_graph
from engine.gpu.device import device_guard
from engine.gpu.io import GraphIO
from engine.gpu.resources import Resources
from engine.gpu.runtime import Runtime
from engine.gpu.warmup import compiles_late_with_cache, precompile, scratch_context

STAGED = "staged"
KERNEL_MODES = (STAGED, *KERNEL_SETS)  # Engine(kernels=...): a kernel set, or staged


# the sets a staged start runs, in order: the first at once, the second once built in the
# background (an Engine swaps its runtime between runs; ar-demo swaps a whole effect
# between frames, app/pipeline.py, since its stages bind the engines' buffers)
STAGED_SETS = ("compact", "optimized")


class OptimizedBuild:
    """The optimized set of `engine`'s model, compiled on a worker thread (module docstring;
    the thread: engine/gpu/background.py)."""

    def __init__(self, ctx, target, graph, options, input_shapes, timer, tune_cache):
        self.ctx = ctx
        self._warned = False
        compile_args = {"input_shapes": input_shapes, "timer": timer, "tune_cache": tune_cache}
        options = replace(options, kernels=STAGED_SETS[1])
        self._build = BackgroundBuild(lambda: self._compile(target, graph, options, compile_args),
                                      f"optimized kernels: {graph.name}",
                                      on_cancelled=lambda built: built[1].release())  # fmt: skip

    def _compile(self, target, graph, options, compile_args) -> tuple:
        """(program, resources, io, runtime) of the optimized set."""
        program = compile_graph(graph, options, target, **compile_args)
        if compiles_late_with_cache(self.ctx):
            precompile(program, scratch_context(self.ctx))
        with device_guard(self.ctx):
            resources = Resources(program, self.ctx)
        io = GraphIO(resources)
        return program, resources, io, Runtime(resources, io)

    @property
    def error(self) -> str | None:
        """Why the optimized set failed to build (the compact set stays: right, slower)."""
        exc = self._build.error
        return None if exc is None else f"{type(exc).__name__}: {exc}"

    @property
    def result(self) -> tuple | None:
        """(program, resources, io, runtime) once built and not yet taken."""
        return self._build.result

    @property
    def ready_s(self) -> float | None:
        """Seconds the build took, once it succeeded."""
        return self._build.seconds if self._build.error is None else None

    @property
    def cancelled(self) -> bool:
        return self._build.cancelled

    @cancelled.setter
    def cancelled(self, value: bool) -> None:
        self._build.cancelled = value

    @property
    def done(self) -> bool:
        return self._build.done

    def wait(self, timeout: float | None = None) -> bool:
        return self._build.wait(timeout)

    def take(self):
        """The built (program, resources, io, runtime), once; None while building or after
        a failure (then a warning, once)."""
        if not self.done:
            return None
        if self.error is not None and not self._warned:
            self._warned = True
            warnings.warn(f"kernels='staged': the optimized set failed to build, the compact "
                          f"set stays: {self.error}", RuntimeWarning, stacklevel=3)  # fmt: skip
        result, self._build.result = self._build.result, None
        return result
