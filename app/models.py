"""The models an effect runs: load, recognise their role from the outputs, pick the effect.

- input: `--model` paths (one or two), the requested `--effect`
- output: `ModelSpec`s (graph, role, input name, value range, fit) and the effect name
- roles, from the graph's outputs (the manifest, when it knows the file, gives the input
  range and fit; otherwise the role's MediaPipe defaults):
  - "segmentation": one output [1, H, W, 1] with H, W > 1 (a probability mask);
  - "detection": an SSD pair [1, N, 4 + 2K] boxes and [1, N, 1] scores;
  - "landmarks": an output with 468 * 3 = 1404 values (face mesh);
  - "hand_landmarks": outputs of 63, 1, 1 and 63 values (21 landmarks, presence,
    handedness, world landmarks);
  - "pose_landmarks": five outputs, the first of 39 * 5 = 195 values (BlazePose).
- usage: `specs = load_models(paths); effect = choose_effect(specs, "auto")`
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from app.effects import EFFECTS
from app.errors import AppError

# role -> (value range, fit) when the manifest does not know the file (MediaPipe's defaults)
ROLE_DEFAULTS = {
    "segmentation": ((0.0, 1.0), "stretch"),
    "detection": ((-1.0, 1.0), "letterbox"),
    "landmarks": ((0.0, 1.0), "roi"),
    "hand_landmarks": ((0.0, 1.0), "roi"),
    "pose_landmarks": ((0.0, 1.0), "roi"),
}


@dataclass
class ModelSpec:
    path: Path
    graph: object  # engine.model.ir.Graph
    role: str | None
    input_name: str
    value_range: tuple[float, float]
    fit: str
    outputs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    postprocess: dict = field(default_factory=dict)  # manifest SSD options, if any

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def refined(self) -> bool:
        """Is this face_landmark_with_attention (478 landmarks with irises)?"""
        from engine.vision import is_attention_model

        return is_attention_model([math.prod(s) for s in self.outputs.values()])


def model_role(outputs: dict[str, tuple[int, ...]]) -> str | None:
    """What a model's outputs say it is (see the module docstring)."""
    shapes = list(outputs.values())
    sizes = [math.prod(s) for s in shapes]
    if any(n == 1404 for n in sizes):
        return "landmarks"
    if sizes == [63, 1, 1, 63]:
        return "hand_landmarks"
    if len(sizes) == 5 and sizes[0] == 195:
        return "pose_landmarks"
    three = [s for s in shapes if len(s) == 3 and s[0] == 1]
    if any(s[2] == 1 for s in three) and any(s[2] >= 4 and (s[2] - 4) % 2 == 0 for s in three):
        return "detection"
    if len(shapes) == 1 and len(shapes[0]) == 4 and shapes[0][3] == 1 and min(shapes[0][1:3]) > 1:
        return "segmentation"
    return None


def load_model(path: str | Path) -> ModelSpec:
    """Import a .tflite file and recognise it; AppError when missing or unreadable."""
    from engine.errors import ModelError

    path = Path(path)
    if not path.is_file():
        hint = (
            " (run `make models` to fetch the MediaPipe models)" if "models" in path.parts else ""
        )
        raise AppError(f"{path}: model not found{hint}")
    try:
        graph = _load_graph(path)
    except ModelError as exc:  # its message names the file already
        raise AppError(str(exc) if str(path) in str(exc) else f"{path}: {exc}") from None
    except Exception as exc:  # a file that is not a flatbuffer at all
        raise AppError(
            f"{path}: not a readable .tflite model ({type(exc).__name__}: {exc})"
        ) from None
    outputs = {graph.tensors[t].name: tuple(graph.tensors[t].shape) for t in graph.outputs}
    if len(graph.inputs) != 1:
        raise AppError(f"{path}: {len(graph.inputs)} inputs; the demo feeds one image input")
    tin = graph.tensors[graph.inputs[0]]
    role = model_role(outputs)
    (lo, hi), fit = ROLE_DEFAULTS.get(role, ((0.0, 1.0), "stretch"))
    post: dict = {}
    entry = _manifest_entry(path)
    if entry is not None:
        (lo, hi), fit, post = entry.input_range, entry.preprocess.get("fit", fit), entry.postprocess
    return ModelSpec(path, graph, role, tin.name, (lo, hi), fit, outputs, post)


def _load_graph(path: Path):
    """The file's graph; a file named like a published model but with other bytes is said
    in one line on stderr (the engine's PublishedModelWarning), other warnings pass on."""
    from engine import load_tflite
    from engine.errors import PublishedModelWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph = load_tflite(path)
    for w in caught:
        if issubclass(w.category, PublishedModelWarning):
            print(f"ar-demo: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return graph


def _manifest_entry(path: Path):
    try:
        from engine.catalog import load_manifest
    except ImportError:
        return None
    for entry in load_manifest().models:
        if entry.file == path.name:
            return entry
    return None


def solution_models(solution: str, refine_landmarks: bool = False) -> list[str]:
    """The manifest's model files of a --solution, as the solution declares them;
    `refine_landmarks`: face mesh's landmark model with attention."""
    from engine.catalog import model_path
    from engine.vision import SOLUTIONS

    names = SOLUTIONS[solution].models(refine_landmarks=refine_landmarks)
    return [str(model_path(name)) for name in names]


def choose_effect(specs: list[ModelSpec], requested: str = "auto") -> str:
    """The effect these models make; AppError suggesting --effect when none fits."""
    roles = {s.role for s in specs}
    desc = ", ".join(f"{s.path.name} {list(s.outputs.values())}" for s in specs)
    if requested == "auto":
        for effect, info in EFFECTS.items():  # the one that uses every model given
            if set(info.needs) == roles and len(info.needs) == len(specs):
                return effect
        if roles == {"landmarks"}:
            raise AppError(
                "face_landmark needs a face detector for its region of interest: add "
                "--model models/face_detection_short_range.tflite (face mesh)"
            )
        raise AppError(
            f"no effect fits the model outputs ({desc}); choose one with --effect "
            f"{{{','.join(EFFECTS)}}} and a model that has its outputs"
        )
    missing = [r for r in EFFECTS[requested].needs if r not in roles]
    if missing:
        raise AppError(f"--effect {requested} needs a {' and a '.join(missing)} model; got {desc}")
    return requested


def by_role(specs: list[ModelSpec], role: str) -> ModelSpec:
    return next(s for s in specs if s.role == role)
