"""Model zoo check: keras networks in every converter variant, engine vs LiteRT.

1. build (tensorflow, in a side venv): keras.applications MobileNetV2,
   MobileNetV3Small, EfficientNetB0, ResNet50 and the small U-Net, random seeded
   weights, SIZE x SIZE inputs, each as fp32 / fp16 / dynamic / int8 / int8_float_io
   (tests/data/quant/keras_convert.py) into a cache folder (default out/zoo, not committed);
2. run (this venv): for each file, the engine (fp32, and fp16 when the adapter has
   shader-f16) against LiteRT's default kernels (XNNPACK, 1 thread) on one seeded input:
   loads or not (the error), GPU / CPU-fallback op counts, max error, latency ratio
   engine / LiteRT measured interleaved (engine/tools/bench/ab.py: one warm-up each, then
   rounds of one run each, A B, B A, ...: load on the machine hits both alike), load time.
The tables print under the stamp line (benchmarks/common.py: command, commit, adapter,
machine, the load before and after); --json writes {"stamp", "rows"}.
Errors: relative max|engine - LiteRT| / max(1, max|LiteRT|) for float outputs; for
int8 outputs, and for the float output of an int8 model, in quantization steps.

usage: python -m benchmarks.engine.model_zoo [--tf-python /work/venvs/tf/bin/python]
       [--size 96] [--cache out/zoo] [--models mobilenet_v2,...] [--rounds 5]
       [--json out/zoo.json] [--markdown out/zoo.md] [--no-build]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, Bench, interleave, table, timed

MODELS = ("mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "resnet50", "unet")
VARIANTS = ("fp32", "fp16", "dynamic", "int8", "int8_float_io")


def build(tf_python: str, cache: Path, models: list[str], size: int) -> None:
    """Convert what the cache lacks (keras_convert.py skips files that exist)."""
    script = ROOT / "tests" / "data" / "quant" / "keras_convert.py"  # the fixtures' converter
    cmd = [tf_python, str(script), str(cache), *(f"{m}:{size}" for m in models)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def seeded_input(graph, seed: int = 0) -> np.ndarray:
    """Uniform [-1, 1) for the model's input; quantized for an int8 input."""
    t = graph.tensors[graph.inputs[0]]
    x = np.random.default_rng(seed).uniform(-1, 1, t.shape).astype(np.float32)
    if t.dtype != "int8":
        return x
    s, z = np.float32(t.quantization.scale[0]), t.quantization.zero_point[0]
    return np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)


def litert(path: Path):
    """LiteRT with its default kernels on one thread: (interpreter, run(x) -> output)."""
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(path), num_threads=1)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]

    def run(x):
        it.set_tensor(inp["index"], x)
        it.invoke()
        return it.get_tensor(out["index"])

    return run


def error(graph, got: np.ndarray, want: np.ndarray) -> tuple[float, str]:
    """(error, unit): quantization steps for int8 models, else relative."""
    out = graph.tensors[graph.outputs[0]]
    diff = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    if out.dtype == "int8":
        return diff, "steps"
    q = graph.tensors[graph.ops[-1].inputs[0]].quantization if graph.ops else None
    if graph.ops[-1].type == "DEQUANTIZE" and q is not None:
        return diff / float(np.float32(q.scale[0])), "steps"
    return diff / max(1.0, float(np.abs(want).max())), "rel"


def weight_figures(graph, engine) -> dict:
    """Weights in the engine (float32 at fp32) vs kept as int8 (1 byte per value + a float32
    scale per channel), and the time to dequantize them at import (to_float)."""
    from engine.reference.quantized import is_quantized_constant
    from engine.transforms.quantized import to_float

    quantized = [t for t in graph.tensors if is_quantized_constant(t)]
    if not quantized:
        return {}
    _, dequant_ms = timed(lambda: to_float(graph))
    floats = sum(t.nbytes for t in engine.graph.tensors if t.is_constant and t.dtype == "float32")
    int8 = sum(t.size * np.dtype(t.dtype).itemsize + 4 * len(t.quantization.scale)
               for t in quantized)  # fmt: skip
    as_float = sum(4 * t.size for t in quantized)
    return {"dequant_ms": dequant_ms, "const_bytes": floats, "quantized_as_float_bytes": as_float,
            "quantized_as_int8_bytes": int8}  # fmt: skip


def check(path: Path, rounds: int, precisions: list[str]) -> dict:
    """One model file: load, op counts, errors per precision, latency ratio at fp32."""
    from engine.gpu.engine import Engine
    from engine.model.importer import load_tflite

    row: dict = {"model": path.stem.rsplit("_", 1)[0], "file": path.name}
    for v in sorted(VARIANTS, key=len, reverse=True):
        if path.stem.endswith("_" + v):
            row["model"], row["variant"] = path.stem[: -len(v) - 1], v
            break
    graph = load_tflite(path)
    x = seeded_input(graph)
    ref = litert(path)
    want = ref(x).copy()
    name_in, name_out = graph.tensors[graph.inputs[0]].name, graph.tensors[graph.outputs[0]].name
    for precision in precisions:
        try:
            engine, load_ms = timed(lambda precision=precision: Engine(graph, precision=precision))
        except Exception as exc:  # a refused model is a row, not a crash
            row[f"error_{precision}"] = None
            row["load_error"] = f"{type(exc).__name__}: {exc}"[:300]
            return row
        load_s = load_ms / 1e3
        got = engine.run({name_in: x})[name_out]
        row[f"error_{precision}"], row["unit"] = error(graph, got, want)
        if precision != "fp32":
            continue
        row["load_s"] = load_s
        row["init_ms"] = engine.init_ms
        row.update(weight_figures(graph, engine))
        row["ops"] = len(engine.graph.ops)
        row["cpu_ops"] = len(engine.fallback_ops)
        row["gpu_ops"] = row["ops"] - row["cpu_ops"]
        row["fallback"] = engine.fallback_ops
        ab = interleave({"engine": lambda e=engine: e.run({name_in: x}),
                         "litert": lambda: ref(x)}, rounds, block=1, warmup=1)  # fmt: skip
        e_ms, l_ms = ab["medians"]["engine"], ab["medians"]["litert"]
        row["engine_ms"], row["litert_ms"], row["ratio"] = e_ms, l_ms, e_ms / l_ms
    return row


HEADER = ["model", "variant", "loads", "GPU ops / CPU ops", "max error fp32", "max error fp16",
          "engine ms", "LiteRT 1T ms", "ratio", "load s"]  # fmt: skip
WEIGHTS_HEADER = ["model", "variant", "dequantize ms", "load s", "weight upload ms",
                  "quantized weights as float32", "as int8"]  # fmt: skip


def markdown(rows: list[dict]) -> str:
    cells = []
    for r in rows:
        unit = " steps" if r.get("unit") == "steps" else ""

        def err(key, r=r, unit=unit):
            v = r.get(key)
            return "-" if v is None else (f"{v:g}{unit}" if unit else f"{v:.2g}")

        loads = "yes" if "load_error" not in r else f"no: {r['load_error'][:80]}"
        cells.append([r["model"], r.get("variant", "?"), loads,
                      f"{r['gpu_ops']} / {r['cpu_ops']}" if "ops" in r else "-",
                      err("error_fp32"), err("error_fp16"),
                      f"{r['engine_ms']:.1f}" if "engine_ms" in r else "-",
                      f"{r['litert_ms']:.1f}" if "litert_ms" in r else "-",
                      f"{r['ratio']:.1f}x" if "ratio" in r else "-",
                      f"{r['load_s']:.1f}" if "load_s" in r else "-"])  # fmt: skip
    weights = [[r["model"], r["variant"], f"{r['dequant_ms']:.0f}", f"{r['load_s']:.1f}",
                f"{r['init_ms'].get('weight_upload', 0):.0f}",
                f"{r['quantized_as_float_bytes'] / 1e6:.1f} MB",
                f"{r['quantized_as_int8_bytes'] / 1e6:.1f} MB"]
               for r in rows if "dequant_ms" in r]  # fmt: skip
    return "\n".join([*table(HEADER, cells), "",
                      "Quantized weights (fp32 engine): dequantized at import vs kept as int8",
                      "", *table(WEIGHTS_HEADER, weights)])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tf-python", default="/work/venvs/tf/bin/python")
    ap.add_argument("--cache", type=Path, default=ROOT / "out" / "zoo")
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")
    ap.add_argument("--no-build", action="store_true", help="use the cache as it is")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args(argv)
    models = args.models.split(",")
    if not args.no_build:
        build(args.tf_python, args.cache, models, args.size)
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    ctx = bench.use(shared_context())
    precisions = ["fp32", "fp16"] if ctx.has_f16 else ["fp32"]
    rows = []
    for model in models:
        for variant in args.variants.split(","):
            path = args.cache / f"{model}_{variant}.tflite"
            if not path.exists():
                rows.append({"model": model, "variant": variant, "load_error": "not built"})
                continue
            rows.append(check(path, args.rounds, precisions))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    text = markdown(rows)
    bench.report(text, {"rows": rows}, args.json)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(bench.markdown(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
