"""Every harness that is not a shipped command: outside the wheel, run from a checkout.

    python -m benchmarks.engine.tile_sweep ...     # kernels, tiles, submits, start-up, memory
    python -m benchmarks.app.soak ...              # ar-demo: start-up, switches, soak, damage
    python -m benchmarks.fidelity.compare ...      # the solutions vs MediaPipe's own outputs
    python -m benchmarks.fuzz --count 700          # corrupt models: ModelError or a result

Run them as modules (`python -m`), from the repository root: the subfolders are named
after the packages they measure, and a file run by path would put them on sys.path.
Every script runs on one harness, benchmarks/common.py: a Bench stamps its report
(command, date, commit, adapter, machine, the load gate around the work) and prints its
tables under that line and writes its JSON with it; timing, interleaving, the load gate
and the markdown table are engine-bench's own (engine/tools/bench/, which ships), used
through it. Nothing under engine/ or app/ imports this package (import-linter contract).
"""
