"""Compile progress: how far a model's compilation got, told to whoever asked.

    with report_to(print):            # the callback gets a Progress per step
        engine = Engine(graph)        # "graph", then "pipelines" k/n
        warm_up(engine)               # "shaders" k/n (engine/gpu/warmup.py), then "ready"

Phases, in order, per model (`Progress.model` is the graph file's stem):
- graph: transforms, kernel choice, memory plans, WGSL (CPU only; done = total = 0)
- pipelines: k of n pipelines created (the driver compiles here on most GPUs)
- shaders: k of n pipelines run once (lavapipe compiles each compute shader at its first
  dispatch, not at creation: 27 of the 33 s before segmentation's first frame with an
  empty Mesa cache, measured on 2 loaded cores)
- ready: the model ran every pipeline once

The listener is a context variable (as tinygrad's knobs): only the code inside
`report_to` (this thread, this block) is told; compiles elsewhere report to nobody and
pay one lookup. A callback may raise to stop a build (a window closed during start-up):
the exception leaves the Engine constructor or warm_up at the next step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

PHASES = ("graph", "pipelines", "shaders", "ready")


@dataclass(frozen=True)
class Progress:
    model: str  # the graph's file stem, e.g. "face_landmark"
    phase: str  # one of PHASES
    done: int = 0
    total: int = 0


Listener = Callable[[Progress], None]
_listener: ContextVar[Listener | None] = ContextVar("engine_compile_progress", default=None)


@contextmanager
def report_to(callback: Listener | None) -> Iterator[None]:
    """Send the progress of every compile in this block (this thread) to `callback`."""
    token = _listener.set(callback)
    try:
        yield
    finally:
        _listener.reset(token)


def report(graph_name: str, phase: str, done: int = 0, total: int = 0) -> None:
    """Tell the listener, if any (called by the compile steps)."""
    callback = _listener.get()
    if callback is not None:
        callback(Progress(Path(graph_name).stem, phase, done, total))
