"""The driver every per-adapter-class sweep shares (tile_sweep, submit_sweep): models
checked, the shared device, the load gate around the work, one sweep per model, a
report {"adapter", "class", "load", "models", ...}, its markdown printed and its JSON
written. An engine error (a model that does not compile, outputs that moved) is one
line on stderr and exit 2, like a missing model.

    return run_sweeps("tile_sweep", args.models, lambda path: sweep_model(path, ...),
                      markdown, args.json, what="8 variants", rounds=args.rounds)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from engine.errors import EngineError
from engine.tools.bench.load import LoadGate


def run_sweeps(tool: str, paths: list[str], sweep: Callable[[str], dict],
               markdown: Callable[[dict], str], json_path: Path | None, what: str,
               **fields) -> int:  # fmt: skip
    """Sweep each model of `paths`; `fields` go into the report as they are."""
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        print(f"{tool}: no such model: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        from engine.gpu.adapters import adapter_class
        from engine.gpu.device import shared_context

        ctx = shared_context()
        gate = LoadGate.check(0.5)
        models = []
        for path in paths:
            print(f"{tool}: {Path(path).stem}: {what}", file=sys.stderr)
            models.append(sweep(path))
    except EngineError as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return 2
    report = {"adapter": ctx.name, "class": adapter_class(ctx.info), **fields,
              "load": gate.after().label(), "models": models}  # fmt: skip
    print(markdown(report))
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=1) + "\n")
    return 0
