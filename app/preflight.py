"""ar-demo's preflight: everything a person can fix, checked before any model compiles.

- input: the parsed options (app/options.py)
- output: nothing, or an AppError with one line (the CLI exits 2)
- checks, in app/cli.py's order: the options among themselves (`check_options`); the
  models' files are read; the face effects' files, --object and --texture, are read and
  checked (`check_effect_files`: app/effects/face_assets.py); a display for the window (GLFW would abort the process, SIGABRT,
  when it has none) or the output video (app/output.py: extension, folder, codec), and
  the --stats / --results folders (`check_outputs`); then the input (camera or file) and
  the adapter; only then the compile.
- usage: `check_options(args)`; `check_outputs(args, "out/ar-demo.mp4")`
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from app.errors import AppError
from app.output import check_output


def check_options(args) -> None:
    """The options among themselves (no file or device touched)."""
    if args.frames is not None and args.frames < 1:
        raise AppError("--frames must be at least 1")
    if args.solution and args.model:
        raise AppError(f"--solution {args.solution} takes the manifest's models: give "
                       f"--solution or --model, not both")  # fmt: skip
    if not args.solution and not args.model:
        raise AppError("which models? give --solution NAME (e.g. --solution hands) or --model PATH")
    if getattr(args, "refine_landmarks", False) and args.solution != "face-mesh":
        raise AppError("--refine-landmarks goes with --solution face-mesh (or give "
                       "face_landmark_with_attention.tflite as the second --model)")  # fmt: skip
    if getattr(args, "max_faces", 1) < 1:
        raise AppError("--max-faces must be at least 1")
    if args.model and len(args.model) > 2:
        raise AppError("at most two --model (face mesh: face detection + face_landmark)")
    if args.headless and args.frames is None and args.input.isdigit():
        raise AppError("--headless from a camera needs --frames N (or use --input FILE)")
    if not args.headless and args.output:
        raise AppError("--output writes a video in headless mode: add --headless (the window "
                       "shows the frames, it does not write them)")  # fmt: skip


def check_effect_files(args, effect: str) -> None:
    """--object / --texture (and --max-faces) go with the face mesh effect; the files are
    read as the effect will read them: not found, unreadable, no OBJ, no triangles, no
    8-bit image... each one line."""
    from app.effects.face_assets import load_object, load_texture

    obj, texture = getattr(args, "object", None), getattr(args, "texture", None)
    given = [o for o, v in (("--object", obj), ("--texture", texture),
                            ("--max-faces", getattr(args, "max_faces", 1) != 1)) if v]  # fmt: skip
    if given and effect != "face-mesh":
        raise AppError(f"{given[0]} goes with the face-mesh effect (--solution face-mesh: its "
                       f"glasses and paint styles), not {effect}")  # fmt: skip
    if obj:
        load_object(Path(obj))
    if texture:
        load_texture(Path(texture))


def check_outputs(args, default_output: str) -> None:
    """The display (window) or the output video (headless), then the report files."""
    if args.headless:
        check_output(args.output or default_output)
    else:
        check_display()
    for option, path in (("--stats", args.stats), ("--results", getattr(args, "results", None))):
        if path:
            check_writable(option, Path(path))


def check_display() -> None:
    """A window can be opened: GLFW initialises (a display server answers)."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        raise AppError("no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); "
                       "use --headless --output OUT.mp4, or run under xvfb-run")  # fmt: skip
    try:
        import glfw

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # GLFW reports its errors as warnings
            ok = glfw.init()
            error = glfw.get_error()
    except Exception as exc:  # the GLFW shared library cannot load
        raise AppError(f"cannot load GLFW for the window ({exc}); use --headless") from None
    if not ok:
        detail = error[1].decode(errors="replace") if error and error[1] else "unknown error"
        raise AppError(f"cannot open a window: GLFW cannot start ({detail}); use --headless "
                       f"--output OUT.mp4")  # fmt: skip


def check_writable(option: str, path: Path) -> None:
    """`path`'s folder exists (or can be made) and is writable, and `path` is not a folder."""
    if path.is_dir():
        raise AppError(f"{option} {path}: is a directory; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AppError(f"{option} {path}: cannot create the folder {path.parent} "
                       f"({exc.strerror})") from None  # fmt: skip
    if not os.access(path.parent, os.W_OK):
        raise AppError(f"{option} {path}: {path.parent} is not writable")
