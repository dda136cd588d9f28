"""The driver every per-adapter-class sweep shares (tile_sweep, submit_sweep): models
checked, the shared device, the stamp and load gate around the work
(benchmarks/common.py), one sweep per model, a report {..., "models"} printed under the
stamp line and written as JSON. An engine error (a model that does not compile, outputs
that moved) is one line on stderr and exit 2, like a missing model.

    return run_sweeps(__spec__.name, argv, args.models, lambda path: sweep_model(path, ...),
                      markdown, args.json, what="8 variants", rounds=args.rounds)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import Bench
from engine.errors import EngineError


def run_sweeps(module: str, argv: list[str] | None, paths: list[str],
               sweep: Callable[[str], dict], markdown: Callable[[dict], str],
               json_path: Path | None, what: str, **fields) -> int:  # fmt: skip
    """Sweep each model of `paths`; `fields` go into the report as they are."""
    tool = module.rsplit(".", 1)[-1]
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        print(f"{tool}: no such model: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        from engine.gpu import shared_context

        ctx = shared_context()
        bench = Bench(module, argv)
        bench.use(ctx)
        models = []
        for path in paths:
            print(f"{tool}: {Path(path).stem}: {what}", file=sys.stderr)
            models.append(sweep(path))
    except EngineError as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return 2
    report = {**fields, "models": models}
    bench.report(markdown(report), report, json_path)
    return 0
