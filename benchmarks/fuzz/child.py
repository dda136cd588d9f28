"""One fuzz worker: runs a batch of mutants in this process and reports each as a JSON line.

Input (stdin, JSON): {"seed": S, "models": {name: path}, "items": [[name, index], ...],
"workdir": folder for the mutant files}. Output (the protocol stream, the process's
original stdout; anything else printed goes to stderr): {"ready": true} once the engine
is imported and the device made, then per mutant {"start": [name, index]} and its result
{"name", "index", "kinds", "detail", "outcome", "stage", "error", "where", "message",
"seconds"}:
- outcome "runs": imported, compiled (Engine on the device) and ran once;
- outcome "model_error": a ModelError at `stage` (import | compile | run);
- outcome "escape": any other exception (`error` is its type, `where` the innermost
  frame in the project).
A crash, hang or memory blow-up leaves a "start" without a result: the parent
(harness.py) sees which mutant it was.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np


def _where(exc: BaseException) -> str:
    """The innermost traceback frame inside engine/ or app/ (else the innermost)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/engine/" in f.filename or "/app/" in f.filename]
    f = (ours or frames or [None])[-1]
    if f is None:
        return "?"
    parts = Path(f.filename).parts
    short = "/".join(parts[parts.index("engine") :]) if "engine" in parts else f.filename
    return f"{short}:{f.lineno} {f.name}"


def feeds_for(engine) -> dict[str, np.ndarray]:
    """Random inputs of the compiled graph's shapes and types (seeded, in [0, 1))."""
    rng = np.random.default_rng(0)
    g, integer_io = engine.graph, engine.program.integer_io
    feeds = {}
    for t in g.inputs:
        tensor = g.tensors[t]
        if tensor.name in integer_io:
            feeds[tensor.name] = np.zeros(tensor.shape, integer_io[tensor.name][1])
        else:
            feeds[tensor.name] = rng.random(tensor.shape, dtype=np.float32)
    return feeds


def run_one(path: Path) -> tuple[str, str, BaseException | None]:
    """(outcome, stage, exception) of importing, compiling and running one file."""
    from engine import Engine
    from engine.errors import ModelError
    from engine.model.importer import load_tflite

    stage = "import"
    try:
        graph = load_tflite(path)
        stage = "compile"
        with Engine(graph) as engine:
            stage = "run"
            engine.run(feeds_for(engine))
        return "runs", stage, None
    except ModelError as exc:
        return "model_error", stage, exc
    except Exception as exc:
        return "escape", stage, exc


def main() -> int:
    job = json.loads(sys.stdin.read())
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the engine or a driver prints stays off the protocol stream
    sys.stdout = sys.stderr

    def say(obj: dict) -> None:
        proto.write(json.dumps(obj) + "\n")

    from benchmarks.fuzz.mutate import mutant
    from engine.gpu.device import shared_context

    shared_context()
    say({"ready": True})
    originals = {name: Path(p).read_bytes() for name, p in job["models"].items()}
    workdir = Path(job["workdir"])
    for name, index in job["items"]:
        say({"start": [name, index]})
        m = mutant(originals[name], name, job["seed"], index)
        path = workdir / f"{name}.mutant{index}.tflite"
        path.write_bytes(m.data)
        t0 = time.perf_counter()
        outcome, stage, exc = run_one(path)
        path.unlink()
        say({"name": name, "index": index, "kinds": list(m.kinds), "detail": m.detail,
             "outcome": outcome, "stage": stage,
             "error": type(exc).__name__ if exc else "", "where": _where(exc) if exc else "",
             "message": str(exc) if exc else "", "path": str(path),
             "seconds": round(time.perf_counter() - t0, 3)})  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
