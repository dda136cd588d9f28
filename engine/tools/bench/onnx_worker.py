"""ONNX Runtime side worker for engine-bench: runs in another interpreter (a venv with
onnxruntime or onnxruntime-webgpu, and tflite2onnx), imports nothing from this project.

1. convert the float32 .tflite to ONNX with tflite2onnx;
2. one profiled InferenceSession (WebGPU EP first when available, then CPU) for one run:
   count the nodes each execution provider really ran;
3. a fresh unprofiled InferenceSession: warm-up, timed runs;
4. print one JSON line: status, providers, node_providers, time_ms, ...

usage: python onnx_worker.py MODEL.tflite OUT.onnx [--runs N] [--warmup N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter


def _emit(**result) -> None:
    print(json.dumps(result), flush=True)


def _feeds(session, np):
    rng = np.random.default_rng(0)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        feeds[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
    return feeds


def _summary(samples, np) -> dict:
    a = np.asarray(samples, np.float64)
    return {
        "runs": int(a.size),
        "mean": float(a.mean()),
        "median": float(np.median(a)),
        "min": float(a.min()),
        "p90": float(np.percentile(a, 90)),
        "max": float(a.max()),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("tflite")
    p.add_argument("onnx")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    args = p.parse_args(argv)
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as exc:
        _emit(status="skipped", reason=f"onnxruntime not importable in {sys.executable}: {exc}")
        return 0
    try:
        import tflite2onnx
    except ImportError as exc:
        _emit(status="skipped", reason=f"tflite2onnx not importable in {sys.executable}: {exc}")
        return 0
    try:
        tflite2onnx.convert(args.tflite, args.onnx)
    except Exception as exc:  # tflite2onnx raises NotImplementedError, IndexError, ...
        _emit(status="skipped", reason=f"tflite2onnx cannot convert: {type(exc).__name__}: {exc}")
        return 0

    available = ort.get_available_providers()
    wanted = [p for p in ("WebGpuExecutionProvider",) if p in available]
    wanted.append("CPUExecutionProvider")
    try:
        opts = ort.SessionOptions()
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(os.path.dirname(args.onnx) or ".", "ort_profile")
        prof = ort.InferenceSession(args.onnx, opts, providers=wanted)
        feeds = _feeds(prof, np)
        prof.run(None, feeds)
        with open(prof.end_profiling()) as f:
            events = json.load(f)
        per_node = {
            e["name"]: e.get("args", {}).get("provider", "?")
            for e in events
            if e.get("cat") == "Node" and e.get("args", {}).get("provider")
        }
        nodes = Counter(per_node.values())

        t0 = time.perf_counter()
        session = ort.InferenceSession(args.onnx, providers=wanted)
        create_ms = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        session.run(None, feeds)
        first_ms = (time.perf_counter() - t0) * 1e3
        for _ in range(max(0, args.warmup - 1)):
            session.run(None, feeds)
        wall, cpu = [], []
        for _ in range(args.runs):
            w0, c0 = time.perf_counter(), time.process_time()
            session.run(None, feeds)
            wall.append((time.perf_counter() - w0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
    except Exception as exc:
        _emit(status="failed", reason=f"{type(exc).__name__}: {exc}")
        return 0
    threads = session.get_session_options().intra_op_num_threads
    _emit(
        status="ok",
        providers=session.get_providers(),
        available_providers=available,
        node_providers=dict(nodes),
        threads=threads or "default (physical cores)",
        create_ms=create_ms,
        first_run_ms=first_ms,
        time_ms=_summary(wall, np),
        cpu_ms_per_run=float(np.mean(cpu)),
        versions={
            "onnxruntime": ort.__version__,
            "tflite2onnx": getattr(tflite2onnx, "__version__", "?"),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
