"""Every harness that is not a shipped command: outside the wheel, run from a checkout.

    python -m benchmarks.engine.tile_sweep ...     # kernels, tiles, submits, start-up, memory
    python -m benchmarks.app.soak ...              # ar-demo: start-up, switches, soak, damage
    python -m benchmarks.fidelity.compare ...      # the solutions vs MediaPipe's own outputs
    python -m benchmarks.fuzz --count 700          # corrupt models: ModelError or a result

Run them as modules (`python -m`), from the repository root: the subfolders are named
after the packages they measure, and a file run by path would put them on sys.path.
The timing, load gate, interleaving and report code they share is engine-bench's own
(engine/tools/bench/), which ships; benchmarks/common.py holds what only the harnesses
share. Nothing under engine/ or app/ imports this package (import-linter contract).
"""
