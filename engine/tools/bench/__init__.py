"""Benchmark harness behind `engine-bench`: the engine, its peers, reports.

- timing: per-run samples -> mean / median / min / p90;
- machine: what ran it (adapter, CPU, library versions);
- engine_runner: init split, warm-up, timed runs, per-dispatch GPU time;
- peers: LiteRT (XNNPACK, GPU accelerator) and ONNX Runtime in a side venv;
- single_op: one-op models for kernel throughput;
- report: the markdown tables and the JSON document;
- ab, load: interleaved rounds and the quiet-machine gate.

The harnesses in benchmarks/ (outside the wheel) build on these same modules.
"""
