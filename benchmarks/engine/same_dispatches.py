"""Are the optimized dispatches of this checkout byte for byte those of another one?

    python -m benchmarks.engine.same_dispatches --against /tmp/before [--restamp]

The latency predictor (engine/latency) is fitted on measured runs of the engine's
dispatches, and `engine_fingerprint()` (a hash of the kernel files, work group rules,
transforms, the op and element-wise tables and WGSL templates) says which engine it was measured on. A change that
touches those files without changing any optimized dispatch (a new kernel set beside the
optimized one, a comment, a refactor) marks the predictor stale though its data still
describes this engine. This tool compiles (no GPU run) and hashes every dispatch as it
is recorded (WGSL, work group count, bindings) of
- every model in models/, for this machine's device and the tile tables of each adapter
  class (llvmpipe, swiftshader, gpu; `--adapters` picks) x buffer, texture x fp32,
  fp16, and
- the latency dataset's programs, 300 NAS cells and 1000 generated kernel layers (the
  seeds `engine-latency measure` uses), for this machine's device, with their feature
  rows as the predictor computes them (`dispatch_list` with data/latency's profile),
in this checkout and in `--against` (a subprocess importing that checkout's engine:
checked), and compares them. `--restamp`: when every one is identical, write this
engine's fingerprint into the installed predictors stamped with the other engine's
(engine/latency/fitted/*.json, data/latency/predictors/*/*.json; `measured_on_engine`
keeps the first); none stamped so, or any difference: nothing changes, exit 1.
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

ROOT = Path(__file__).resolve().parents[2]  # not common.ROOT: see main()
ADAPTERS = ("llvmpipe", "swiftshader", "gpu")
PROFILE = ROOT / "data" / "latency" / "lavapipe.adapter.json"  # the dataset's adapter


def _digest(program) -> str:
    """Every dispatch as it is recorded: WGSL, work group count, what each binding is."""
    h = hashlib.sha256()
    for d in program.dispatches:
        bindings = [(b.role, b.tensor, b.space, b.dtype,
                     None if b.data is None else (b.data.shape, b.data.tobytes()))
                    for b in d.bindings]  # fmt: skip
        h.update(f"{d.kernel}|{d.workgroups}|{bindings}|{d.source}".encode())
    return h.hexdigest()


def _targets(adapters: tuple[str, ...] = ADAPTERS) -> dict:
    """Compile targets: this machine's device as it is (what the dataset was measured on,
    when that is this machine), then each of `adapters`' tile tables with default
    limits (subgroups where such adapters have them: the CPU drivers, not 'gpu')."""
    from engine.errors import DeviceError
    from engine.gpu.compile import Target
    from engine.gpu.device import shared_context

    out = {}
    try:
        out["device"] = Target.of(shared_context())
    except DeviceError:  # no adapter: the synthetic targets only
        pass
    for adapter in adapters:
        out[adapter] = Target(adapter=adapter, subgroups=adapter != "gpu")
    return out


def hashes(
    models: Path, cells: int = 300, layers: int = 1000, adapters: tuple[str, ...] = ADAPTERS
) -> dict[str, str]:
    """{program name: digest of its dispatches} with the `engine` package imported
    (this checkout's, or the other's in the child: PYTHONPATH). Dataset programs also get
    their feature rows as the predictor computes them (dispatch_list, the profile)."""
    import engine
    from engine.errors import EngineError
    from engine.gpu.compile import CompileOptions, compile_graph
    from engine.latency.builder import build_graph
    from engine.latency.dispatches import AdapterProfile, dispatch_list
    from engine.latency.kernels import kernel_graphs
    from engine.latency.predictors.base import engine_fingerprint
    from engine.latency.space import sample_cells
    from engine.model.importer import load_tflite

    out = {"__engine__": str(Path(engine.__file__).parent),  # which checkout's engine ran
           "__fingerprint__": engine_fingerprint()}  # fmt: skip
    targets = _targets(adapters)
    for path in sorted(glob.glob(str(models / "*.tflite"))):
        graph = load_tflite(path)
        for name, target in targets.items():
            for storage in ("buffer", "texture"):
                for precision in ("fp32", "fp16"):
                    key = f"{Path(path).stem}:{name}:{storage}:{precision}"
                    try:
                        program = compile_graph(graph, CompileOptions(precision, storage), target)
                    except EngineError as exc:  # the same error on both sides is the same
                        out[key] = f"error: {exc}"
                        continue
                    out[key] = _digest(program)
    profile = AdapterProfile.from_dict(json.loads(PROFILE.read_text()))
    target = targets.get("device", targets["llvmpipe"])
    dataset = [(f"cell{i}", build_graph(cell, seed=i))
               for i, cell in enumerate(sample_cells(cells, seed=0))]  # fmt: skip
    dataset += [(f"{family}:{name}", g) for family, name, g in kernel_graphs(layers, seed=0)]
    for key, graph in dataset:
        rows = [d.to_list() for d in dispatch_list(graph, profile)]
        out[key] = _digest(compile_graph(graph, CompileOptions(), target))
        out[key + ":features"] = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
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
    ap.add_argument("--adapters", default=",".join(ADAPTERS),
                    help="adapter classes whose tile tables are compared besides this "
                    "machine's device (llvmpipe,swiftshader,gpu); the installed predictor "
                    "is lavapipe's: a change to the gpu class's tables leaves it valid")  # fmt: skip
    ap.add_argument("--restamp", action="store_true",
                    help="if identical: mark the installed predictors as this engine's")  # fmt: skip
    args = ap.parse_args(argv)
    adapters = tuple(a for a in args.adapters.split(",") if a)
    unknown = set(adapters) - set(ADAPTERS)
    if unknown:
        ap.error(f"--adapters: unknown {sorted(unknown)}; choose from {ADAPTERS}")
    models, sizes = args.models.resolve(), (args.cells, args.layers, adapters)
    # imported here, not above: the child runs this file in the other checkout, which may
    # have no benchmarks/common.py
    from benchmarks.common import Bench
    from engine.errors import DeviceError
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    try:
        bench.use(shared_context())
    except DeviceError:  # no adapter: hashes() compiles for the adapter classes only
        pass
    status, lines = compare(args.against, models, sizes, args.restamp)
    bench.report("\n".join(lines), {})
    return status


def compare(
    against: Path, models: Path, sizes: tuple, restamp_predictors: bool
) -> tuple[int, list[str]]:
    """(exit status, lines to print): this checkout's hashes vs `against`'s;
    `restamp_predictors`: restamp the predictors when every one is identical."""
    other = against.resolve()
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
    here, there = Path(mine.pop("__engine__")), Path(theirs.pop("__engine__"))
    lines = [f"engines: {here} vs {there}"]
    if here == there or other not in there.resolve().parents:
        return 2, [*lines, f"same_dispatches: the child did not import {other}'s engine"]
    fingerprint, theirs_fingerprint = mine.pop("__fingerprint__"), theirs.pop("__fingerprint__")
    differ = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
    lines.append(f"{len(mine)} programs here, {len(theirs)} in {against}: "
                 f"{len(differ)} differ{': ' + ', '.join(differ[:10]) if differ else ''}")  # fmt: skip
    if differ:
        return 1, lines
    if restamp_predictors:  # only predictors fitted on the engine just compared with
        done = restamp(theirs_fingerprint, fingerprint)
        for f in done:
            lines.append(f"restamped {f.relative_to(ROOT)}: {theirs_fingerprint} -> {fingerprint}")
        if not done:
            lines.append(f"same_dispatches: no predictor is stamped {theirs_fingerprint} "
                         f"({against}'s engine): nothing restamped")  # fmt: skip
            return 1, lines
    return 0, lines


if __name__ == "__main__":
    raise SystemExit(main())
