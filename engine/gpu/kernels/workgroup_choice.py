"""Work group selection inside kernels: one call between a kernel and the selector.

A tunable kernel (conv2d, conv1x1, depthwise_tiled) describes its layer as a
`KernelSignature`, computes the choice it always made (its `table` candidate:
so policy "table" is exactly the kernels' previous behaviour), and passes `make`,
which renders the layer's first dispatch with any candidate (the tuner times it).
See docs/workgroups.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.gpu.kernels.base import BuildContext, Dispatch
from engine.gpu.workgroups import (
    Candidate,
    Choice,
    DeviceLimits,
    KernelSignature,
    WorkShape,
    choose,
)

Make = Callable[[Candidate], Dispatch]


def pick(sig: KernelSignature, ctx: BuildContext, table: Candidate, make: Make) -> Candidate:
    """The candidate for `sig` under ctx.workgroups ("table": `table` itself); in the
    compact kernel set the smallest work shape under the heuristic, whatever the policy
    (one output vec4 per invocation: every tunable kernel supports it; nothing timed)."""
    limits = ctx.limits if ctx.limits is not None else DeviceLimits()
    if ctx.compact:
        sig = replace(sig, work=(WorkShape(1, 1, 1),))  # also what ctx.choices records
        choice = choose(sig, limits, "heuristic")
    elif ctx.workgroups == "table":
        choice = Choice.of(table, "table")
    else:
        time_fn = None
        if ctx.workgroups == "tune" and ctx.tune_timer is not None:
            timer = ctx.tune_timer

            def time_fn(c: Candidate) -> float:
                return timer(make(c))

        choice = choose(
            sig,
            limits,
            ctx.workgroups,
            cache=ctx.tune_cache,
            time_fn=time_fn,
            method=ctx.tune_method,
            runs=ctx.tune_runs,
        )
    if ctx.choices is not None:
        ctx.choices.append((sig, table, choice, make))
    return choice.candidate


def work_shapes(*shapes: WorkShape) -> tuple[WorkShape, ...]:
    """The kernel's work shapes, preferred first, without repeats."""
    return tuple(dict.fromkeys(shapes))
