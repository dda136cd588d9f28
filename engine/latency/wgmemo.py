"""The work-group heuristic's choices for the app's layer shapes, shipped with the predictor.

A first `engine-latency predict` of a model compiles it, and ranking work-group candidates
for shapes not yet in the disk memo (engine/gpu/workgroups/memo.py) was half of that
compile. The choices for the app's models ship as `fitted/workgroups/<adapter>.json`:
{"code": memo.code_hash(), "limits": DeviceLimits fields, "models", "choices"}; predict
preloads them. A file of other rule code or other limits is ignored (ranked as before), so
a stale memo costs time, never a different choice.

    preload(profile)                                   # predict, before compiling
    write(["models/face_landmark.tflite"], profile)    # engine-latency memo MODEL...
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from engine.latency.dispatches import AdapterProfile


def memo_path(profile: AdapterProfile) -> Path:
    from engine.latency.predictors import FITTED_DIR

    return FITTED_DIR / "workgroups" / f"{profile.name}.json"


def _limits(profile: AdapterProfile):
    from engine.gpu.workgroups import DeviceLimits

    return DeviceLimits(**{k: tuple(v) if isinstance(v, list) else v
                           for k, v in profile.limits.items()})  # fmt: skip


def preload(profile: AdapterProfile, path: Path | None = None) -> int:
    """Preload the shipped choices for `profile`'s adapter; how many (0: none or stale)."""
    from engine.gpu.workgroups import memo

    path = path or memo_path(profile)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return 0
    if doc.get("code") != memo.code_hash() or doc.get("limits") != profile.limits:
        return 0
    memo.preload(_limits(profile), doc["choices"])
    return len(doc["choices"])


def write(models: list[str | os.PathLike], profile: AdapterProfile,
          out: Path | None = None) -> Path:  # fmt: skip
    """Rank the work groups of `models` at every precision of `profile` in an empty cache
    (so only their shapes are kept) and write the memo file."""
    import tempfile

    from engine import config
    from engine.gpu.workgroups import memo
    from engine.latency.dispatches import dispatch_list
    from engine.model.importer import load_tflite

    before = os.environ.get("ENGINE_CACHE_DIR")
    with tempfile.TemporaryDirectory() as empty:
        os.environ["ENGINE_CACHE_DIR"] = empty  # the disk memo starts empty
        config.reload()
        try:
            for m in models:
                graph = load_tflite(Path(m))
                for precision in profile.storage:
                    dispatch_list(graph, profile, precision)
            choices = memo.entries(_limits(profile))
            memo.flush()  # into the empty folder, not at exit into a deleted one
        finally:
            if before is None:
                os.environ.pop("ENGINE_CACHE_DIR")
            else:
                os.environ["ENGINE_CACHE_DIR"] = before
            config.reload()
    out = Path(out or memo_path(profile))
    out.parent.mkdir(parents=True, exist_ok=True)
    head = {"code": memo.code_hash(), "limits": profile.limits,
            "models": sorted(Path(m).name for m in models)}  # fmt: skip
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(choices.items())]
    body = ",\n  ".join(lines)  # one choice a line: a diff shows which shape changed
    out.write_text(json.dumps(head)[:-1] + ',\n "choices": {\n  ' + body + "\n }\n}\n")
    return out
