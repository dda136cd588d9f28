"""Are the optimized dispatches of this checkout byte for byte those of another one?

    python -m engine.tools.same_dispatches --against /tmp/before [--restamp]

The latency predictor (engine/latency) is fitted on measured runs of the engine's
dispatches, and `engine_fingerprint()` (a hash of the kernel files, work group rules,
transforms and WGSL templates) says which engine it was measured on. A change that
touches those files without changing any optimized dispatch (a new kernel set beside the
optimized one, a comment, a refactor) marks the predictor stale though its data still
describes this engine. This tool renders, GPU-free, every dispatch source of
- every model in models/ (adapter classes llvmpipe, swiftshader, gpu x buffer, texture x
  fp32, fp16), and
- the latency dataset's programs: 300 NAS cells and 1000 generated kernel layers (the
  seeds `engine-latency measure` uses), on the llvmpipe target,
in this checkout and in `--against` (a subprocess there), and compares their hashes.
`--restamp`: when every one is identical, write this engine's fingerprint into the
installed predictors (engine/latency/fitted/*.json, data/latency/predictors/*/*.json),
noting the fingerprint they were measured on; otherwise change nothing and exit 1.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ("llvmpipe", "swiftshader", "gpu")


def _digest(program) -> str:
    return hashlib.sha256("\n".join(d.source for d in program.dispatches).encode()).hexdigest()


def hashes(models: Path, cells: int = 300, layers: int = 1000) -> dict[str, str]:
    """{program name: sha256 of its dispatch sources} with the `engine` package imported
    (this checkout's, or the other's in the child: PYTHONPATH)."""
    import engine
    from engine.errors import EngineError
    from engine.gpu.compile import CompileOptions, Target, compile_graph
    from engine.latency.builder import build_graph
    from engine.latency.kernels import kernel_graphs
    from engine.latency.space import sample_cells
    from engine.model.importer import load_tflite

    out = {"__engine__": str(Path(engine.__file__).parent)}  # which checkout's engine ran
    for path in sorted(glob.glob(str(models / "*.tflite"))):
        graph = load_tflite(path)
        for adapter in ADAPTERS:
            target = Target(adapter=adapter, subgroups=adapter != "gpu")
            for storage in ("buffer", "texture"):
                for precision in ("fp32", "fp16"):
                    key = f"{Path(path).stem}:{adapter}:{storage}:{precision}"
                    try:
                        program = compile_graph(graph, CompileOptions(precision, storage), target)
                    except EngineError as exc:  # the same error on both sides is the same
                        out[key] = f"error: {exc}"
                        continue
                    out[key] = _digest(program)
    target = Target(adapter="llvmpipe", subgroups=True)
    for i, cell in enumerate(sample_cells(cells, seed=0)):
        out[f"cell{i}"] = _digest(
            compile_graph(build_graph(cell, seed=i), CompileOptions(), target)
        )
    for family, name, graph in kernel_graphs(layers, seed=0):
        out[f"{family}:{name}"] = _digest(compile_graph(graph, CompileOptions(), target))
    return out


def restamp(measured: str, fingerprint: str, root: Path = ROOT) -> list[Path]:
    """Write `fingerprint` into every predictor file fitted on engine `measured`."""
    files = [*root.glob("engine/latency/fitted/*.json"),
             *root.glob("data/latency/predictors/*/*.json")]  # fmt: skip
    done = []
    for f in files:
        doc = json.loads(f.read_text())
        if doc.get("engine") == measured:
            doc.setdefault("measured_on_engine", measured)  # kept over later restamps
            doc["engine"] = fingerprint
            f.write_text(json.dumps(doc, indent=1) + "\n")
            done.append(f)
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", type=Path, required=True, help="the other checkout")
    ap.add_argument("--models", type=Path, default=ROOT / "models",
                    help="folder of .tflite models (models/)")  # fmt: skip
    ap.add_argument("--cells", type=int, default=300, help="NAS cells of the dataset (300)")
    ap.add_argument("--layers", type=int, default=1000, help="generated layers (1000)")
    ap.add_argument("--restamp", action="store_true",
                    help="if identical: mark the installed predictors as this engine's")  # fmt: skip
    args = ap.parse_args(argv)
    other = args.against.resolve()
    models, sizes = args.models.resolve(), (args.cells, args.layers)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "other.json"
        # this file's hashes() with the other checkout's `engine` (PYTHONPATH first)
        code = (f"import json, runpy; ns = runpy.run_path({__file__!r}); "
                f"open({str(out)!r}, 'w').write(json.dumps(ns['hashes']"
                f"(__import__('pathlib').Path({str(models)!r}), *{sizes!r})))")  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(other)}
        subprocess.run([sys.executable, "-c", code], cwd=other, env=env, check=True)
        theirs = json.loads(out.read_text())
    mine = hashes(models, *sizes)
    print(f"engines: {mine.pop('__engine__')} vs {theirs.pop('__engine__')}")
    differ = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
    print(
        f"{len(mine)} programs here, {len(theirs)} in {args.against}: "
        f"{len(differ)} differ{': ' + ', '.join(differ[:10]) if differ else ''}"
    )
    if differ:
        return 1
    if args.restamp:
        from engine.latency.predictors.base import engine_fingerprint

        fitted = json.loads((ROOT / "engine/latency/fitted/lavapipe-fp32.json").read_text())
        for f in restamp(fitted["engine"], engine_fingerprint()):
            print(f"restamped {f.relative_to(ROOT)} -> {engine_fingerprint()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
