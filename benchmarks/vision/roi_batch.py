"""Would the crops of one frame run faster as one batch on XNNPACK? (issue 30, item 2)

For each landmark model and crop count n: LiteRT's interpreter with the input resized to
batch n, one invoke, against n invokes of the file as it is (batch 1: what the solutions'
CpuRoiModel does), alternated in rounds (benchmarks/common.py's interleave) in one
process, both on every core; the batch's outputs are checked bit-equal to the n single
runs'. Prints a markdown table under the stamp line and writes JSON ({"stamp", "rows"}).

usage: python -m benchmarks.vision.roi_batch [--models hand_landmark_full face_landmark]
       [--crops 2 3] [--rounds 6] [--block 20] [--json out/roi_batch.json]
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
    return {"model": name, "crops": n, "threads": os.cpu_count(), "bit_equal": same,
            "per_crop_ms": med["one invoke per crop"], "batch_ms": med["one batch"],
            "speedup": med["one invoke per crop"] / med["one batch"]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+",
                    default=["hand_landmark_full", "hand_landmark_lite", "face_landmark"])  # fmt: skip
    ap.add_argument("--crops", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--block", type=int, default=20)
    ap.add_argument("--json", default="out/roi_batch.json")
    args = ap.parse_args(argv)
    bench = Bench(__spec__.name, argv)
    rows = [measure(m, n, args.rounds, args.block) for m in args.models for n in args.crops]
    header = ["model", "crops", "threads", "one invoke per crop ms", "one batch ms", "x",
              "bit-equal"]  # fmt: skip
    cells = [[r["model"], str(r["crops"]), str(r["threads"]), f"{r['per_crop_ms']:.2f}",
              f"{r['batch_ms']:.2f}", f"{r['speedup']:.2f}", "yes" if r["bit_equal"] else "NO"]
             for r in rows]  # fmt: skip
    bench.report("\n".join(table(header, cells, "lrrrrrl")), {"rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
