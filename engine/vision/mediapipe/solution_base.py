"""MediaPipe's SolutionBase for the drop-in, over a native engine.vision solution.

- input: `process(image)`: an RGB uint8 numpy image (H, W, 3), as MediaPipe's; each call
  is the next frame of a video (MediaPipe's 33333 us apart) unless static_image_mode
- output: a `SolutionOutputs` namedtuple with MediaPipe's field names in MediaPipe's order
  (MediaPipe returns the namedtuple class itself, its fields set as class attributes; an
  instance reads the same and also prints, iterates and has `_asdict()`); each value
  None exactly where MediaPipe gives None
- semantics, MediaPipe's: close() once (a second close, or process() after it, is the
  ValueError MediaPipe raises), `with` closes on exit, reset() starts the stream over
  (tracking and filters), a 4-channel image is MediaPipe's ValueError, a float image its
  TypeError; the graph-building part of MediaPipe's class (a binarypb or graph config,
  create_graph_options) has no counterpart: the solutions are engine.vision's
- engine options: the native solutions' own defaults (backend "auto": webgpu on a GPU,
  XNNPACK on a CPU rasterizer). `engine_options(backend="xnnpack", num_threads=2, ...)`
  sets the options every drop-in solution made afterwards passes to engine.vision
  (docs/mediapipe.md lists them; an unknown one is the native TypeError at construction);
  `with engine_options(...):` sets them for the block only; `engine_options()`: the
  defaults again. MediaPipe's constructor signatures stay as they are.
- usage (a solution module):
    class Hands(SolutionBase):
        def __init__(self, static_image_mode=False, ...):
            self._start(_Hands(..., **_base.native_options()), OUTPUTS)
        def _outputs(self, result): return (..., ..., ...)
"""

from __future__ import annotations

import collections
from collections.abc import Mapping

import numpy as np

from engine.vision.mediapipe import messages

_ENGINE_OPTIONS: dict = {}
# what the drop-in decides itself: the frame format and the running mode (MediaPipe's
# static_image_mode), and results read back as numbers
RESERVED = ("bgr", "output", "running_mode", "static_image_mode")
RGB_CHANNELS = 3


class engine_options:  # noqa: N801 (used as a function: mp.engine_options(backend=...))
    """Engine options for the drop-in solutions made from now on (replacing the previous
    ones; none: the native defaults); as a context manager, for its block only."""

    def __init__(self, **options):
        reserved = sorted(set(options) & set(RESERVED))
        if reserved:
            raise TypeError(f"engine_options: {', '.join(reserved)} is the drop-in's own "
                            f"(MediaPipe's arguments and RGB numpy frames)")  # fmt: skip
        self.options = dict(options)
        self.previous = dict(_ENGINE_OPTIONS)
        _ENGINE_OPTIONS.clear()
        _ENGINE_OPTIONS.update(options)

    def __enter__(self) -> engine_options:
        return self

    def __exit__(self, *exc) -> None:
        _ENGINE_OPTIONS.clear()
        _ENGINE_OPTIONS.update(self.previous)


def native_options() -> dict:
    """The engine options a drop-in solution made now passes to its native solution."""
    return dict(_ENGINE_OPTIONS)


def readonly(mask: np.ndarray | None) -> np.ndarray | None:
    """A read-only view of a mask, as MediaPipe's (a view of its image frame's memory)."""
    if mask is None:
        return None
    view = mask.view()
    view.flags.writeable = False
    return view


def pose_outputs(result) -> tuple:
    """(pose_landmarks, pose_world_landmarks, segmentation_mask) of a native PoseResult:
    all None without a pose, as MediaPipe gives them (its mask comes with the pose)."""
    if result.landmarks is None:
        return None, None, None
    return (
        messages.normalized_landmark_list(result.landmarks, visibility=result.visibility),
        messages.landmark_list(result.world_landmarks, visibility=result.visibility),
        readonly(result.mask),
    )


class SolutionBase:
    """MediaPipe's SolutionBase: process, close, reset, `with`; see the module docstring."""

    _solution = None  # the native solution; None: not started, or closed
    _output_type = None

    def __init__(self, binary_graph_path=None, graph_config=None, calculator_params=None,
                 graph_options=None, side_inputs=None, outputs=None,
                 stream_type_hints=None):  # fmt: skip
        raise NotImplementedError(
            "engine.vision.mediapipe runs no MediaPipe graph (binary_graph_path, "
            "graph_config): its solutions (mp.solutions.hands.Hands, ...) run "
            "engine.vision's; make one of those"
        )

    def _start(self, solution, outputs: tuple[str, ...]) -> None:
        self._solution = solution
        self._output_type = collections.namedtuple("SolutionOutputs", outputs)

    def _outputs(self, result) -> tuple:
        """MediaPipe's output values, in `outputs` order, from a native result."""
        raise NotImplementedError

    def process(self, input_data: np.ndarray | Mapping[str, np.ndarray]):
        """Processes an RGB image (or {"image": image}) and returns SolutionOutputs.

        Raises:
          ValueError: closed, or the image is not three channel RGB.
          TypeError: the image is not uint8.
        """
        if isinstance(input_data, np.ndarray):
            if self._output_type is None or self._solution is None:
                raise ValueError("_input_stream_type_info is None in SolutionBase")
            input_data = {"image": input_data}
        if self._solution is None:
            raise ValueError("_graph is None in SolutionBase")
        if not input_data:
            return self._output_type(*(None,) * len(self._output_type._fields))
        for name in input_data:
            if name != "image":
                raise KeyError(name)
        image = input_data["image"]
        if image.shape[2] != RGB_CHANNELS:
            raise ValueError("Input image must contain three channel rgb data.")
        image = np.asarray(image).astype(np.uint8, casting="safe", copy=False)
        return self._output_type(*self._outputs(self._solution.process(image)))

    def close(self) -> None:
        """Closes the solution and releases what it holds (GPU memory, models)."""
        if self._solution is None:
            raise ValueError("Closing SolutionBase._graph which is already None")
        self._solution.close()
        self._solution = None

    def reset(self) -> None:
        """Resets the solution for another run: tracking and filters start over."""
        reset = getattr(self._solution, "reset", None)
        if reset is not None:
            reset()

    def create_graph_options(self, options_message, values):
        """MediaPipe's graph options: no counterpart (see the module docstring)."""
        raise NotImplementedError("engine.vision.mediapipe builds no MediaPipe graph options")

    def __enter__(self):
        """A "with" statement support."""
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        """Closes the solution."""
        self.close()
