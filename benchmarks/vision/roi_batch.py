"""Do the crops of one frame run faster as one batch?

For each landmark model, crop count n and backend, alternated in rounds (benchmarks/
common.py's interleave) in one process; the batch's outputs are checked bit-equal to the
crop-by-crop ones:
- xnnpack: LiteRT's interpreter with the input resized to batch n, one invoke, against n
  invokes of the file as it is (batch 1: what CpuRoiModel does), both on every core;
- webgpu: engine/vision/roi_model.RoiModel as the solutions run it (n pre-processes from
  a frame texture of the people clip, the model, one read-back, one submit and wait),
  crop by crop (`batch=False`) against its batch-n engine (built before timing).
Prints a markdown table under the stamp line and writes JSON ({"stamp", "rows"}).

usage: python -m benchmarks.vision.roi_batch [--models hand_landmark_full face_landmark]
       [--crops 2 3] [--backends xnnpack webgpu] [--rounds 6] [--block 20]
       [--json out/roi_batch.json]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from benchmarks.common import Bench, interleave, table
from engine.catalog.manifest import model_path


def interpreter(name: str, batch: int):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(model_path(name)), num_threads=os.cpu_count())
    if batch > 1:
        shape = it.get_input_details()[0]["shape"]
        it.resize_tensor_input(it.get_input_details()[0]["index"], [batch, *shape[1:]])
    it.allocate_tensors()
    return it


def invoke(it, tensor: np.ndarray) -> list[np.ndarray]:
    it.set_tensor(it.get_input_details()[0]["index"], tensor)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def measure_webgpu(name: str, n: int, rounds: int, block: int) -> dict:
    from benchmarks.vision.speed import clip_rgb
    from engine.catalog.paths import assets_dir
    from engine.gpu import Engine, FrameInput, shared_context
    from engine.vision.roi import Rect
    from engine.vision.roi_model import RoiModel

    ctx = shared_context()
    engine = Engine.from_tflite(model_path(name), context=ctx)
    clip = assets_dir() / "people.mp4"
    frames = clip_rgb(clip, 1)
    if not frames:
        raise SystemExit(f"roi_batch: {clip}: no frame to read (make assets)")
    view, size = FrameInput(ctx.device)(frames[0])
    rects = [Rect(0.2 + 0.6 * i / n, 0.4, 0.25, 0.3, 0.1 * i) for i in range(n)]
    alone = RoiModel(engine, (0.0, 1.0), "replicate", True, batch=False)
    together = RoiModel(engine, (0.0, 1.0), "replicate", True, batch_after=0)
    together.run(view, size, rects)
    together.wait_batches()
    if together.batch_errors:
        raise SystemExit(f"roi_batch: {name} at a batch of {n}: {together.batch_errors[n]}")
    want, got = alone.run(view, size, rects), together.run(view, size, rects)
    same = all(np.array_equal(a[k], b[k]) for (a, _), (b, _) in zip(want, got, strict=True)
               for k in a)  # fmt: skip
    runs = {"crop by crop": lambda: alone.run(view, size, rects),
            "one batch": lambda: together.run(view, size, rects)}  # fmt: skip
    med = interleave(runs, rounds, block, warmup=3)["medians"]
    together.destroy()
    alone.destroy()
    return {"model": name, "crops": n, "backend": f"webgpu ({ctx.name})", "bit_equal": same,
            "per_crop_ms": med["crop by crop"], "batch_ms": med["one batch"],
            "speedup": med["crop by crop"] / med["one batch"]}  # fmt: skip


def measure(name: str, n: int, rounds: int, block: int) -> dict:
    single, batched = interpreter(name, 1), interpreter(name, n)
    shape = single.get_input_details()[0]["shape"]
    tensors = np.random.default_rng(0).random([n, *shape[1:]], dtype=np.float32)
    alone = [invoke(single, tensors[i : i + 1]) for i in range(n)]
    together = invoke(batched, tensors)
    same = all(np.array_equal(together[k][i], alone[i][k][0])
               for i in range(n) for k in range(len(together)))  # fmt: skip
    runs = {"one invoke per crop": lambda: [invoke(single, tensors[i : i + 1]) for i in range(n)],
            "one batch": lambda: invoke(batched, tensors)}  # fmt: skip
    med = interleave(runs, rounds, block, warmup=3)["medians"]
    return {"model": name, "crops": n, "backend": f"xnnpack ({os.cpu_count()} threads)",
            "bit_equal": same,
            "per_crop_ms": med["one invoke per crop"], "batch_ms": med["one batch"],
            "speedup": med["one invoke per crop"] / med["one batch"]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+",
                    default=["hand_landmark_full", "hand_landmark_lite", "face_landmark"])  # fmt: skip
    ap.add_argument("--crops", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--backends", nargs="+", choices=["xnnpack", "webgpu"],
                    default=["xnnpack", "webgpu"])  # fmt: skip
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--block", type=int, default=20)
    ap.add_argument("--json", default="out/roi_batch.json")
    args = ap.parse_args(argv)
    bench = Bench(__spec__.name, argv)
    how = {"xnnpack": measure, "webgpu": measure_webgpu}
    rows = [how[b](m, n, args.rounds, args.block)
            for m in args.models for n in args.crops for b in args.backends]  # fmt: skip
    header = ["model", "crops", "backend", "crop by crop ms", "one batch ms", "x",
              "bit-equal"]  # fmt: skip
    cells = [[r["model"], str(r["crops"]), r["backend"], f"{r['per_crop_ms']:.2f}",
              f"{r['batch_ms']:.2f}", f"{r['speedup']:.2f}", "yes" if r["bit_equal"] else "NO"]
             for r in rows]  # fmt: skip
    bench.report("\n".join(table(header, cells, "lrlrrrl")), {"rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
