"""The solutions engine-extract runs, by name, and their options as command-line flags.

- `SOLUTIONS`: the solutions by name (engine/vision/registry.py: the class, its result
  class and its per-frame fields)
- `OPTIONS`: every flag's option name, type and help; which solution takes which is read
  from its constructor's signature (one home: the constructor), so a flag the chosen
  solution does not take is an error, not ignored
- usage: `add_option_flags(parser)`; `kw = solution_options("face-mesh", args)`
"""

from __future__ import annotations

import argparse
import inspect
from dataclasses import dataclass

from engine.precision import PRECISIONS
from engine.vision.backends import BACKENDS, CHOICES
from engine.vision.registry import SOLUTIONS


@dataclass(frozen=True)
class Option:
    name: str  # the constructor's keyword
    kind: object  # int, float, str or bool (bool: --x / --no-x)
    help: str
    choices: tuple | None = None


OPTIONS = (
    Option(
        "backend",
        str,
        "where the models run ("
        + "; ".join(f"{b.name}: {b.description}" for b in BACKENDS.values())
        + "; auto: xnnpack on a CPU rasterizer adapter with LiteRT installed, else webgpu)",
        CHOICES,
    ),
    Option("num_threads", int, "xnnpack backend: LiteRT threads (default: every core)"),
    Option("precision", str, "webgpu backend: the engine's precision", tuple(PRECISIONS)),
    Option("adapter", str, "webgpu backend: a substring of the adapter's name (ENGINE_ADAPTER)"),
    Option("static_image_mode", bool, "detect on every frame, no tracking between frames"),
    Option(
        "model_selection",
        int,
        "face-detection: 0 (short range) or 1 (full range); selfie-segmentation: 0 "
        "(general) or 1 (landscape)",
    ),
    Option(
        "model_complexity",
        int,
        "hands: 0 or 1; pose, holistic: 0 (lite), 1 (full) or 2 (heavy)",
    ),
    Option("max_num_faces", int, "face-mesh: faces to track"),
    Option("max_num_hands", int, "hands: hands to track"),
    Option("refine_landmarks", bool, "face-mesh: 478 landmarks with the irises"),
    Option("refine_face_landmarks", bool, "holistic: the face's 478 landmarks"),
    Option("min_detection_confidence", float, "the detector's score threshold"),
    Option("min_tracking_confidence", float, "the landmark model's flag threshold"),
    Option("max_detections", int, "the detector's candidates after NMS"),
    Option("smooth_landmarks", bool, "pose, holistic: MediaPipe's landmark smoothing"),
    Option(
        "enable_segmentation", bool, "pose, holistic: the person mask (its statistics per frame)"
    ),
    Option("smooth_segmentation", bool, "pose, holistic: smooth the mask over frames"),
)


def add_option_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per OPTIONS entry, default None (the constructor's default applies)."""
    group = parser.add_argument_group(
        "solution options", "passed to the solution's constructor; the defaults are its own "
        "(docs/vision.md); a flag the solution does not take is an error")  # fmt: skip
    for opt in OPTIONS:
        flag = "--" + opt.name.replace("_", "-")
        if opt.kind is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                               help=opt.help)  # fmt: skip
        else:
            metavar = None if opt.choices else {int: "N", float: "X", str: "NAME"}[opt.kind]
            group.add_argument(flag, type=opt.kind, choices=opt.choices, default=None,
                               metavar=metavar, help=opt.help)  # fmt: skip


def solution_class(name: str) -> type:
    return SOLUTIONS[name].solution_class()


def solution_fields(name: str) -> dict:
    """The per-frame fields solution `name` writes (its module's FIELDS)."""
    return SOLUTIONS[name].fields


def accepted(cls: type) -> set[str]:
    """The OPTIONS names `cls` takes: its keywords, plus base.Solution's when it passes
    **options on, plus the engine's precision (base.Solution gives its other keywords to
    every Engine)."""
    names = {"precision"}
    for klass in cls.__mro__:
        if klass is object:
            continue
        params = inspect.signature(klass.__init__).parameters
        names |= {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY}
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            break
    return names & {opt.name for opt in OPTIONS}


def solution_options(name: str, args: argparse.Namespace) -> dict:
    """The options given on the command line for solution `name`; ValueError naming the
    flags it does not take."""
    given = {o.name: getattr(args, o.name) for o in OPTIONS if getattr(args, o.name) is not None}
    wrong = sorted(set(given) - accepted(solution_class(name)))
    if wrong:
        flags = ", ".join("--" + w.replace("_", "-") for w in wrong)
        raise ValueError(f"{name} takes no {flags}")
    return given


def resolved_options(name: str, given: dict) -> dict:
    """`given` with the constructor's defaults of every OPTIONS name it takes (the file's
    metadata: what produced the results)."""
    cls, out = solution_class(name), {}
    for klass in cls.__mro__[:-1]:
        for n, p in inspect.signature(klass.__init__).parameters.items():
            if n in accepted(cls) and n not in out and p.default is not p.empty:
                out[n] = p.default
    return dict(sorted({**out, **given}.items()))
