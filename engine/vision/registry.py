"""THE solution table: every solution, once. ar-demo (its --solution, effects and model
roles), engine-extract, the per-frame records and the fidelity and speed harnesses read it.

- an entry: `name` (ar-demo's --solution and engine-extract's name), `module` (under
  engine/vision/solutions: the class, its result class, FIELDS and record()), `cls`,
  `result`, `effect` (ar-demo's effect that draws it), `mediapipe` (MediaPipe's module
  under mediapipe.python.solutions); `models(**options)`: the manifest's models the class
  runs with those options (its own declaration says)
- adding a solution: its module (declaration, result, FIELDS, record), one entry here, its
  effect in app/effects, a fidelity case
- usage: `SOLUTIONS["hands"].solution_class()(max_num_hands=2)`; `by_result("HandsResult")`
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class SolutionEntry:
    name: str
    module: str
    cls: str
    result: str
    effect: str
    mediapipe: str

    def _module(self):
        return importlib.import_module(f"engine.vision.solutions.{self.module}")

    def solution_class(self) -> type:
        return getattr(self._module(), self.cls)

    def result_class(self) -> type:
        return getattr(self._module(), self.result)

    def models(self, **options) -> tuple[str, ...]:
        """The manifest's models the solution runs with `options` (its defaults: none)."""
        return self.solution_class().models(**options)

    @property
    def fields(self) -> dict:
        """The per-frame fields its results write (engine/vision/records.py)."""
        return self._module().FIELDS

    def record(self, result) -> dict:
        """One frame's fields, but for the frame number and size."""
        return self._module().record(result)


SOLUTIONS: dict[str, SolutionEntry] = {
    e.name: e
    for e in (
        SolutionEntry("face-detection", "face_detection", "FaceDetector", "FaceDetectorResult",
                      "face-detection", "face_detection"),
        SolutionEntry("face-mesh", "face_mesh", "FaceMesh", "FaceMeshResult", "face-mesh",
                      "face_mesh"),
        SolutionEntry("selfie-segmentation", "selfie_segmentation", "SelfieSegmenter",
                      "SegmentationResult", "segmentation", "selfie_segmentation"),
        SolutionEntry("hands", "hands", "Hands", "HandsResult", "hands", "hands"),
        SolutionEntry("pose", "pose", "Pose", "PoseResult", "pose", "pose"),
        SolutionEntry("holistic", "holistic", "Holistic", "HolisticResult", "holistic",
                      "holistic"),
    )
}  # fmt: skip


def solution(name: str) -> SolutionEntry:
    """The entry of `name`; ValueError naming the known ones."""
    if name not in SOLUTIONS:
        raise ValueError(f"unknown solution {name!r}; known: {', '.join(SOLUTIONS)}")
    return SOLUTIONS[name]


def by_result(result_name: str) -> SolutionEntry:
    """The entry whose result class is `result_name`; KeyError naming the result classes."""
    for entry in SOLUTIONS.values():
        if entry.result == result_name:
            return entry
    known = ", ".join(e.result for e in SOLUTIONS.values())
    raise KeyError(f"{result_name}: no per-frame fields declared (have: {known})")


def by_effect(effect: str) -> SolutionEntry:
    """The entry ar-demo's effect `effect` draws."""
    for entry in SOLUTIONS.values():
        if entry.effect == effect:
            return entry
    raise ValueError(f"no solution is drawn by effect {effect!r}")
