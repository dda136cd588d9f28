"""When run() hands its recorded dispatches to the GPU: all in one submit at the end, or
some early, so the GPU starts on them while Python records the rest.

Recording is Python (3 calls a dispatch, engine/gpu/recorder.py), and on a real GPU a
run's CPU work (uploads, recording, submits) is about as long as the GPU's: on an NVIDIA
H100 face detection's 46 dispatches compute in 0.39 ms and run() encodes for 0.12-0.30
ms. With one submit the two add up; with an early submit they overlap. TFLite's GPU
delegate flushes periodically on some GPUs for the same reason. Every submit costs a
pass end, a command buffer and a queue call, and a CPU adapter computes on the cores
that record, so the plan is a row per adapter class (like the tile tables: fixed,
copied in by hand with the measurement that chose it), never a timing taken at run
time. `python -m benchmarks.engine.submit_sweep` measures rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.gpu.adapters import CLASSES, adapter_class


@dataclass(frozen=True)
class SubmitPlan:
    """Submit after the first `first` dispatches of a run, then after every `every` more
    (None: no early submit / no more after the first one). The last submit, with the
    outputs' readback, is always at the end."""

    first: int | None = None
    every: int | None = None

    def __post_init__(self) -> None:
        for name in ("first", "every"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"SubmitPlan.{name} must be >= 1 or None, got {value}")
        if self.first is None and self.every is not None:
            raise ValueError("SubmitPlan.every needs a first submit")

    def points(self, total: int) -> frozenset[int]:
        """The dispatch counts (1-based) after which a run of `total` dispatches submits
        early; never at `total` itself (the final submit follows anyway)."""
        if self.first is None:
            return frozenset()
        marks = [self.first]
        while self.every is not None and marks[-1] + self.every < total:
            marks.append(marks[-1] + self.every)
        return frozenset(m for m in marks if m < total)


ONE_SUBMIT = SubmitPlan()

# CPU adapters compute on the cores that record: nothing to overlap, one submit.
# gpu: an NVIDIA H100 (Vulkan; submit_sweep, data/bench/nvidia-h100/run4-submits-*.json,
# run5-submits-confirm.json, run7-recording.json): of 8 plans, after 8 then every 32 was
# the steadiest; run() 1.06x / 1.08x / 1.13x faster than one submit on face detection /
# landmark / selfie in a 30-round confirmation (1.15x / 1.09x / 1.08x in the 15-round
# sweep), and 1.08x / 1.05x / 1.13x with direct recording (recorder.py, run7-recording.json).
SUBMITS: dict[str, SubmitPlan] = {
    **{cls: ONE_SUBMIT for cls in CLASSES},
    "gpu": SubmitPlan(first=8, every=32),
}


def submit_plan(info: dict) -> SubmitPlan:
    """The row for an adapter (wgpu's adapter.info)."""
    return SUBMITS[adapter_class(info)]
