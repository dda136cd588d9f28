"""Peer runtimes on the same model and inputs; each one optional, never fatal.

- litert: LiteRT Interpreter (XNNPACK delegate by default), one row per thread count;
- litert-gpu: LiteRT CompiledModel with the GPU accelerator (WebGPU/Dawn in the wheel);
- onnx: ONNX Runtime in a side interpreter (see onnx_worker.py), WebGPU EP asked
  first; the row is labelled by where the nodes really ran (profiling), so a silent
  CPU fallback shows up as "ort-cpu", never as WebGPU.
A peer that is not installed or fails gives a row with status "skipped"/"failed" and
a one-line reason. Native libraries log to fd 2; that is captured, not printed.

Usage: litert_rows(model, feeds, threads=[1, 16], runs=100, warmup=10)
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.config import settings
from engine.native_log import captured_fd2
from engine.tools.bench.timing import summarize, time_runs

PEERS = ("litert", "litert-gpu", "onnx")
ONNX_PYTHON_ENV = "ENGINE_BENCH_ONNX_PYTHON"  # engine/config.py


@dataclass(frozen=True)
class ModelSource:
    """One model as the peers need it: a file path when there is one, the bytes always."""

    name: str
    data: bytes
    path: str | None = None


def skipped(backend: str, reason: str, status: str = "skipped", **extra) -> dict:
    return {"backend": backend, "status": status, "reason": _one_line(reason), **extra}


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


_NOISE = re.compile(
    r"^INFO|^at |^While |npu|plugin|openvino|dispatch librar|Source Location|^=+", re.I
)
_TELLING = re.compile(r"adapter|webgpu|dawn|vulkan|required|not supported|unsupported", re.I)
_DAWN_SEEN: list[str] = []  # Dawn's adapter warnings, printed once per process
_ERRORISH = re.compile(r"error|failed|warning", re.I)


def _log_reason(log: str, exc: BaseException | None = None) -> str:
    """The telling lines of a native log: adapter/WebGPU/Dawn lines first, then errors;
    accelerator-registry chatter (NPU plugins, INFO) left out."""
    lines = []
    for line in log.splitlines():
        if line.lstrip().startswith("INFO"):
            continue
        line = re.sub(
            r"^(ERROR|WARNING|INFO|[EW]\d{4}[^\]]*\])?:?\s*(\[[^\]]*\])?\s*", "", line.strip()
        )
        line = line.lstrip("└- ").strip()
        if line and not _NOISE.search(line) and line not in lines:
            lines.append(line)
    _DAWN_SEEN.extend(ln for ln in lines if "required" in ln and ln not in _DAWN_SEEN)
    if any("no adapters" in ln.lower() for ln in lines):  # Dawn says why only the first time
        lines = [ln for ln in _DAWN_SEEN if ln not in lines] + lines
    picked = [ln for ln in lines if _TELLING.search(ln)] or [
        ln for ln in lines if _ERRORISH.search(ln)
    ]
    text = "; ".join(picked[:2])
    if not text and exc is not None:
        text = f"{type(exc).__name__}: {exc}"
    return text


def max_error(ref: dict, got: dict) -> float | None:
    """max|got - ref| / max(1, max|ref|) over outputs matched by name (None: no match)."""
    errs = []
    for name, r in ref.items():
        g = got.get(name)
        if g is None or np.asarray(g).size != np.asarray(r).size:
            continue
        r64 = np.asarray(r, np.float64).ravel()
        g64 = np.asarray(g, np.float64).ravel()
        errs.append(float(np.max(np.abs(g64 - r64)) / max(1.0, float(np.max(np.abs(r64))))))
    return max(errs) if errs else None


# --- LiteRT interpreter (XNNPACK) ---------------------------------------------------------
def litert_rows(
    model: ModelSource, feeds: dict, threads: list[int], runs: int, warmup: int
) -> list[dict]:
    """One LiteRT interpreter row per thread count."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as exc:
        return [skipped("litert", f"ai-edge-litert not installed ({exc})")]
    rows = []
    for n in threads:
        backend = "litert-xnnpack"
        log: list[str] = []
        try:
            t_create = time.perf_counter()
            with captured_fd2() as log:
                it = (
                    Interpreter(model_path=model.path, num_threads=n)
                    if model.path
                    else Interpreter(model_content=model.data, num_threads=n)
                )
                it.allocate_tensors()
            create_ms = (time.perf_counter() - t_create) * 1e3
            ins = {d["name"]: d for d in it.get_input_details()}
            outs = it.get_output_details()
            order = list(ins)

            def run(it=it, ins=ins, outs=outs, order=order):
                for k, (name, value) in enumerate(feeds.items()):
                    d = ins.get(name) or ins[order[k]]
                    it.set_tensor(d["index"], value)
                it.invoke()
                return {d["name"]: it.get_tensor(d["index"]) for d in outs}

            t0 = time.perf_counter()
            outputs = run()
            first_ms = (time.perf_counter() - t0) * 1e3
            wall, cpu = time_runs(run, runs, max(0, warmup - 1))
        except Exception as exc:  # LiteRT raises RuntimeError/ValueError with long texts
            text = f"{exc} {log[0] if log else ''}"
            m = re.search(
                r"(?:unresolved custom op|didn't find op for builtin opcode)[: ']*(\S+)", text, re.I
            )
            reason = (
                f"unsupported op {m.group(1).strip(chr(39))}"
                if m
                else f"{type(exc).__name__}: {exc}"
            )
            rows.append(skipped(backend, reason, status="failed", threads=n))
            continue
        rows.append(
            {
                "backend": backend,
                "status": "ok",
                "threads": n,
                "first_run_ms": first_ms,
                "time_ms": summarize(wall).as_dict(),
                "cpu_ms_per_run": float(np.mean(cpu)),
                "outputs": outputs,
                "create_ms": create_ms,
                "init_ms": create_ms + first_ms,
                "_run": run,  # for the interleaved A/B (ab.py); not in the JSON
            }
        )
    return rows


# --- LiteRT GPU accelerator (CompiledModel) ---------------------------------------------
def litert_gpu_row(model: ModelSource, feeds: dict, runs: int, warmup: int) -> dict:
    """LiteRT's CompiledModel on the GPU accelerator; GPU|CPU only when GPU alone refuses
    the model's ops, and then labelled with is_fully_accelerated()."""
    backend = "litert-gpu"
    try:
        from ai_edge_litert.compiled_model import CompiledModel
        from ai_edge_litert.hardware_accelerator import HardwareAccelerator as HA
    except ImportError as exc:
        return skipped(backend, f"ai-edge-litert has no CompiledModel API ({exc})")
    tried = []
    model_obj = None
    for accel, label in ((HA.GPU, "GPU"), (HA.GPU | HA.CPU, "GPU|CPU")):
        with captured_fd2() as log:
            try:
                t0 = time.perf_counter()
                model_obj = (
                    CompiledModel.from_file(model.path, hardware_accel=accel)
                    if model.path
                    else CompiledModel.from_buffer(model.data, hardware_accel=accel)
                )
                create_ms = (time.perf_counter() - t0) * 1e3
                error = None
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            gc.collect()  # LiteRT's environment logs its teardown: do it inside the capture
        if error is None:
            break
        tried.append(f"{label}: {_log_reason(log[0]) or error}")
        if "adapter" in tried[-1].lower():  # no device at all: GPU|CPU cannot help
            break
    if model_obj is None:
        return skipped(backend, "accelerator refused: " + " / ".join(tried), status="failed")
    try:
        with captured_fd2():
            fully = bool(model_obj.is_fully_accelerated())
            ins = model_obj.create_input_buffers(0)
            outs = model_obj.create_output_buffers(0)
            sig = model_obj.get_signature_by_index(0)
            out_names = list(sig.get("outputs", [])) if isinstance(sig, dict) else []
            values = list(feeds.values())

            def run():
                for buf, value in zip(ins, values, strict=False):
                    buf.write(value)
                model_obj.run_by_index(0, ins, outs)
                return [
                    buf.read(buf_size, np.float32)
                    for buf, buf_size in zip(outs, sizes, strict=True)
                ]

            sizes = _output_sizes(model_obj, sig, len(outs))
            t0 = time.perf_counter()
            first = run()
            first_ms = (time.perf_counter() - t0) * 1e3
            wall, cpu = time_runs(run, runs, max(0, warmup - 1))
    except Exception as exc:
        return skipped(backend, f"run failed: {type(exc).__name__}: {exc}", status="failed")
    names = out_names or [f"output{i}" for i in range(len(first))]
    return {
        "backend": backend if fully else "litert-gpu+cpu",
        "status": "ok",
        "fully_accelerated": fully,
        "create_ms": create_ms,
        "first_run_ms": first_ms,
        "time_ms": summarize(wall).as_dict(),
        "cpu_ms_per_run": float(np.mean(cpu)),
        "init_ms": create_ms + first_ms,
        "_run": lambda: dict(zip(names, run(), strict=False)),  # for ab.py; not in the JSON
        "note": "" if fully else "not fully accelerated: some ops on CPU",
        "outputs": dict(zip(names, first, strict=False)),
    }


def _output_sizes(model_obj, sig, count: int) -> list[int]:
    """Element counts of the signature's outputs (from the tensor details)."""
    key = sig.get("key") if isinstance(sig, dict) else None
    details = model_obj.get_output_tensor_details(key) if key is not None else {}
    sizes = []
    for d in details.values() if isinstance(details, dict) else []:
        shape = d.get("shape") if isinstance(d, dict) else None
        sizes.append(int(np.prod(shape)) if shape is not None else 0)
    if len(sizes) != count or 0 in sizes:
        raise RuntimeError(f"cannot size outputs from signature details {details!r}")
    return sizes


# --- ONNX Runtime (side interpreter) -----------------------------------------------------
def default_onnx_python() -> str | None:
    """ENGINE_BENCH_ONNX_PYTHON, else this interpreter when it has onnxruntime, else None."""
    if settings().onnx_python is not None:
        return str(settings().onnx_python)
    try:
        import importlib.util

        if importlib.util.find_spec("onnxruntime") is not None:
            return sys.executable
    except (ImportError, ValueError):
        pass
    return None


def onnx_row(
    model: ModelSource, float_tflite: bytes, runs: int, warmup: int, python: str | None
) -> dict:
    """ONNX Runtime on the model converted by tflite2onnx, run by onnx_worker.py in
    `python` (a venv with onnxruntime[-webgpu] and tflite2onnx)."""
    backend = "ort"
    if not python:
        return skipped(
            backend,
            f"onnxruntime not installed here; run scripts/onnx_venv.sh and set "
            f"{ONNX_PYTHON_ENV} or --onnx-python",
        )
    found = shutil.which(python)  # a name on PATH or a path; the worker runs in a temp dir
    if found is None:
        return skipped(backend, f"--onnx-python {python}: no such interpreter")
    python = str(Path(found).absolute())
    worker = Path(__file__).with_name("onnx_worker.py")
    with tempfile.TemporaryDirectory(prefix="engine-bench-onnx-") as tmp:
        src = Path(tmp) / "model.tflite"
        src.write_bytes(float_tflite)  # DEQUANTIZE folded: tflite2onnx mishandles fp16 weights
        cmd = [python, str(worker), str(src), str(Path(tmp) / "model.onnx")]
        cmd += ["--runs", str(runs), "--warmup", str(warmup)]
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=600, cwd=tmp, env=_worker_env()
            )
        except subprocess.TimeoutExpired:
            return skipped(backend, "onnx worker timed out after 600 s", status="failed")
        except OSError as exc:  # not executable, bad interpreter line
            return skipped(backend, f"--onnx-python {python}: {exc}", status="failed")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = _log_reason(proc.stderr) or proc.stderr.strip()[-300:]
        return skipped(backend, f"onnx worker exited {proc.returncode}: {tail}", status="failed")
    res = json.loads(lines[-1])
    if res.get("status") != "ok":
        return skipped(backend, res.get("reason", "?"), status=res.get("status", "failed"))
    nodes = res.get("node_providers", {})
    on_webgpu = nodes.get("WebGpuExecutionProvider", 0)
    total = sum(nodes.values())
    if on_webgpu:
        backend, note = "ort-webgpu", f"{on_webgpu}/{total} nodes on WebGPU"
    else:
        backend = "ort-cpu"
        why = _webgpu_refusal(proc.stdout + proc.stderr, res)
        note = f"WebGPU EP not used ({why}); all {total} nodes on CPU"
    return {
        "backend": backend,
        "status": "ok",
        "note": note,
        "threads": res.get("threads"),
        "providers": res.get("providers"),
        "available_providers": res.get("available_providers"),
        "node_providers": nodes,
        "versions": res.get("versions"),
        "first_run_ms": res.get("first_run_ms"),
        "time_ms": res["time_ms"],
        "cpu_ms_per_run": res.get("cpu_ms_per_run"),
    }


def _worker_env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the side venv must not import this project's packages
    return env


def _webgpu_refusal(log: str, res: dict) -> str:
    """Why ORT did not use its WebGPU EP (its fallback notice goes to stdout, Dawn's to fd 2)."""
    if "WebGpuExecutionProvider" not in res.get("available_providers", []):
        return "this onnxruntime build has no WebGpuExecutionProvider"
    m = re.search(r"Failed to get a WebGPU adapter[^\n]*", log)
    if m:
        dawn = re.search(r"Warning: ([^\n]*required[^\n]*)", log)
        return _one_line(m.group(0) + (f"; Dawn: {dawn.group(1)}" if dawn else ""), 200)
    return _one_line(_log_reason(log) or "EP not in the InferenceSession's providers", 200)
