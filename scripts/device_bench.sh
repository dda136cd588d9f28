#!/usr/bin/env bash
# Engine figures on a lent GPU machine (the workplace's `device` tool; no internet there).
# Measured with it on an NVIDIA H100 (docs/benchmarks.md, "Real GPU"; raw output in
# data/bench/nvidia-h100/). The probe, dispatch and kernels steps also run here on lavapipe (PY=.venv/bin/python
# RES=/tmp/x bash scripts/device_bench.sh probe dispatch kernels).
# Everything it needs travels with the working tree (both folders are git-ignored; about
# 50 MB, under the tool's 64 MiB), made here first by `bash scripts/device_bench.sh prepare`:
#   .gl/   Vulkan loader + GL debs (apt-get download)
#   .whl/  cp312 wheels the GPU image lacks: wgpu, rendercanvas, tflite, platformdirs,
#          ai-edge-litert, backports.strenum, cffi, pycparser (ORT=1: onnxruntime-webgpu and
#          tflite2onnx too, for the bench step's ONNX peer)
# then `run` with carry [".gl", ".whl", "models/<each of the three>.tflite",
# "assets/astronaut.png" (pytest), ".devdata" (latency)]
# and the command `bash scripts/device_bench.sh setup probe bench ...`.
# Usage (on the device machine, repo root):  bash scripts/device_bench.sh STEP...
#   prepare     (here, not there) download .gl/ and .whl/
#   setup       unpack the loader, install the wheels into /tmp/site (run first, every call)
#   probe       GPU, Vulkan ICD, the adapters wgpu sees
#   bench       engine-bench vs LiteRT XNNPACK (all cores, 1 thread), LiteRT GPU, ORT WebGPU
#               (PEERS=litert,litert-gpu: without ORT)
#   storage     engine-bench --peers none with buffer and texture storage
#   dispatch    the fixed cost of one dispatch (python -m benchmarks.engine.dispatch_cost)
#   workgroups  engine-bench --workgroups (table / heuristic / tuned per signature)
#   latency N S engine-latency measure --repeat of the lavapipe dataset's first N cells,
#               at most S seconds; resumes from .devdata/nvidia.csv.gz when carried (copy
#               the $RES/nvidia.csv.gz that came back there between calls)
#   tiles       tile_sweep: GEMM, depthwise and reduce tile rows for this adapter class
#   kernels     kernel_bench --baseline: GFLOP/s per kernel family, the tile-table kernels vs before
#   pytest      the GPU op and model tests that matter most on a new adapter class
#   startup     first_result: fresh process to first result, cold and warm caches, both
#               kernel sets beside LiteRT GPU
#   submits     submit_sweep: early-submit plans beside LiteRT GPU (fp32, then fp16)
#   abi         the prebuilt wgpu header, early-submit and recorder tests (cffi differs there)
#   recording   submit_sweep: direct vs wgpu-py recording, one submit and the class's plan
#   fused       tile_sweep --only fused: depthwise + 1x1 fused (tile rows) or not, buffers
#               and textures
#   backends    adapter enumeration + device in fresh processes, wgpu's instance with every
#               backend vs the primary ones (what engine/gpu/device.py asks for), alternating
#   sync        engine-bench vs XNNPACK (all cores): --sync sleep, then spin
#   first       first_result, default (optimized) kernels beside LiteRT GPU, cold and warm
#   fixed       engine-latency measure-fixed: the host's fixed cost of run()
#   appmodels   engine-latency measure --models: the three app models as dataset rows
#   cells N S K the lavapipe dataset's first N cells, S seconds, K processes sharing the
#               GPU through a lock (engine-latency measure --shard I/K --lock)
# Results go to $RES (default out/device; JSON + markdown), a line of progress per step on
# stdout. With PACK=FILE (the device tool: PACK=$OUT/results.tgz) $RES is packed into FILE
# after every step, so a run cut off at its time limit still returns the steps it finished
# (the tool returns at most 8 files).
set -uo pipefail
RES="${RES:-out/device}"
mkdir -p "$RES"
MODELS=(models/face_detection_short_range.tflite models/face_landmark.tflite
  models/selfie_segmentation.tflite)
PY="${PY:-python3}"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/site:$PWD"
NV=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$NV" ] && export VK_DRIVER_FILES="$NV" VK_ICD_FILENAMES="$NV"

cli() { # cli SECONDS MODULE ARGS...: a console script without an installed package
  local seconds=$1 mod=$2
  shift 2
  timeout "$seconds" "$PY" -c "import sys; from $mod import main; sys.exit(main())" "$@"
}

step_prepare() {
  local o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  mkdir -p .gl .whl /tmp/amd64/partial
  # shellcheck disable=SC2086
  apt-get $o update -qq && (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 \
    libopengl0 libgl1 libglx0 libgles2)
  local platforms=""
  for p in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014; do
    platforms="$platforms --platform ${p}_x86_64"
  done
  # shellcheck disable=SC2086
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp $platforms --platform any -d .whl wgpu==0.32.0 rendercanvas \
    tflite==2.18.0 platformdirs ai-edge-litert==2.3.0 backports.strenum cffi pycparser \
    ${ORT:+onnxruntime-webgpu tflite2onnx}
}

step_setup() {
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
  # the GPU image sets PYTHONDONTWRITEBYTECODE=1: without this every process compiles
  # wgpu-py, jinja2 and the engine from source (0.2-0.4 s of each start-up figure)
  "$PY" -m compileall -q -j 0 /tmp/site engine app >/dev/null
  # ... and the image's own numpy and jinja2, which pip would have byte-compiled on an
  # ordinary install (both the engine and LiteRT's first-result processes import numpy)
  "$PY" -m compileall -q -j 0 "$("$PY" -c 'import numpy, os; print(os.path.dirname(numpy.__file__))')" \
    "$("$PY" -c 'import jinja2, os; print(os.path.dirname(jinja2.__file__))')" >/dev/null
  # the ONNX peer's interpreter: engine-bench clears PYTHONPATH for its worker (the side
  # venv must not import this project), so this one sets it to the wheels alone
  printf '#!/bin/sh\nPYTHONPATH=/tmp/site exec %s "$@"\n' "$(command -v "$PY")" >/tmp/ortpy
  chmod +x /tmp/ortpy
}

step_probe() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,utilization.gpu \
    --format=csv
  nproc
  uptime
  "$PY" - <<'EOF'
import wgpu
for a in wgpu.gpu.enumerate_adapters_sync():
    i = a.info
    print(i["adapter_type"], i["backend_type"], i["device"], i.get("driver", ""), sep=" | ")
EOF
}

step_bench() {
  cli 180 engine.tools.bench_cli "${MODELS[@]}" --peers "${PEERS:-litert,litert-gpu,onnx}" \
    --threads all,1 --onnx-python /tmp/ortpy --json "$RES/bench.json" \
    --markdown "$RES/bench.md"
}

step_storage() {
  for s in buffer texture; do
    cli 60 engine.tools.bench_cli "${MODELS[@]}" --peers none --storage $s \
      --ab-rounds 0 --json "$RES/storage-$s.json" --markdown "$RES/storage-$s.md"
  done
}

step_dispatch() {
  cli 45 benchmarks.engine.dispatch_cost --chains 1,50,200,1000 --groups 1,16,256 \
    --json "$RES/dispatch.json"
}

step_workgroups() {
  cli 90 engine.tools.bench_cli --workgroups "${MODELS[@]}" --wg-sample 24 \
    --json "$RES/workgroups.json" --markdown "$RES/workgroups.md"
}

step_tiles() {
  cli 100 benchmarks.engine.tile_sweep "${MODELS[@]}" --rounds 11 --json "$RES/tiles-buffer.json"
  cli 60 benchmarks.engine.tile_sweep "${MODELS[@]}" --rounds 7 --storage texture \
    --json "$RES/tiles-texture.json"
}

step_kernels() {
  cli 80 benchmarks.engine.kernel_bench "${MODELS[@]}" --baseline --rounds 7 \
    --storage buffer,texture --json "$RES/kernels.json"
}

step_pytest() {
  timeout 120 "$PY" -m pytest -q -p no:cacheprovider tests/gpu/test_gemm.py \
    tests/gpu/test_conv1x1.py tests/gpu/test_conv1x1_quad.py tests/gpu/test_conv_first.py \
    tests/gpu/test_depthwise.py tests/gpu/test_models.py tests/gpu/test_compact_kernels.py \
    tests/gpu/test_pooling.py tests/gpu/test_tile_tables.py tests/gpu/test_depthwise_conv1x1.py \
    tests/gpu/test_pooled_residual.py \
    --junitxml "$RES/pytest.xml" 2>&1 | tail -40 | tee "$RES/pytest.log"
}

step_startup() {
  cli 300 benchmarks.engine.first_result "${MODELS[@]}" --kernels optimized compact --litert \
    --cache cold warm --rounds 3 --json "$RES/first-result.json" | tee "$RES/first-result.md"
  # do pipelines compile in parallel on this driver? (the default is min(CPUs, 8) threads)
  ENGINE_COMPILE_THREADS=1 cli 60 benchmarks.engine.first_result "${MODELS[0]}" --kernels optimized \
    --cache cold --rounds 2 --json "$RES/first-result-1thread.json" | tail -3
}

step_first() { # first_result with the default kernels beside LiteRT GPU, cold and warm
  cli 200 benchmarks.engine.first_result "${MODELS[@]}" --kernels optimized --litert \
    --cache cold warm --rounds 3 --json "$RES/first-result.json" | tee "$RES/first-result.md"
}

step_submits() {
  cli 90 benchmarks.engine.submit_sweep "${MODELS[@]}" --litert --json "$RES/submits-fp32.json" \
    | tee "$RES/submits-fp32.md"
  cli 60 benchmarks.engine.submit_sweep "${MODELS[@]}" --litert --precision fp16 \
    --plans none,8,8/32 --json "$RES/submits-fp16.json" | tee "$RES/submits-fp16.md"
}

step_abi() {
  timeout 90 "$PY" -m pytest -q -p no:cacheprovider tests/gpu/test_wgpu_abi.py \
    tests/gpu/test_submits.py tests/gpu/test_recorder.py tests/benchmarks/test_submit_sweep.py \
    2>&1 | tail -15 | tee "$RES/abi.log"
}

step_recording() {
  cli 120 benchmarks.engine.submit_sweep "${MODELS[@]}" --litert --plans none,8/32 \
    --recording direct,wgpu-py --rounds 30 --json "$RES/recording.json" | tee "$RES/recording.md"
}

step_fused() {
  cli 200 benchmarks.engine.tile_sweep "${MODELS[@]}" --only fused --rounds 15 \
    --json "$RES/fused-buffer.json" | tee "$RES/fused-buffer.md"
  cli 90 benchmarks.engine.tile_sweep "${MODELS[@]}" --only fused --rounds 9 --storage texture \
    --variants "fused none,fused 64/64 2x2" --json "$RES/fused-texture.json" \
    | tee "$RES/fused-texture.md"
}

step_backends() {
  for round in 1 2 3 4 5 6; do
    for b in All Primary; do
      B=$b R=$round "$PY" - <<'EOF'
import os, time
t0 = time.perf_counter()
import wgpu
import wgpu.backends.wgpu_native.extras as extras
t1 = time.perf_counter()
extras.set_instance_extras(backends=[os.environ["B"]])
adapters = wgpu.gpu.enumerate_adapters_sync()
t2 = time.perf_counter()
best = [a for a in adapters if a.info["backend_type"] == "Vulkan"][0]
best.request_device_sync()
t3 = time.perf_counter()
print(f'{os.environ["B"]:8s} round {os.environ["R"]} import {t1 - t0:.3f} enumerate '
      f'{t2 - t1:.3f} device {t3 - t2:.3f}', sorted(a.info["backend_type"] for a in adapters))
EOF
    done
  done 2>&1 | tee "$RES/backends.txt"
}

step_sync() {
  for mode in sleep spin; do
    cli 120 engine.tools.bench_cli "${MODELS[@]}" --peers litert --threads all --sync $mode \
      --json "$RES/sync-$mode.json" --markdown "$RES/sync-$mode.md" | grep "xnnpack t=16 |" \
      | tail -3
  done
}

step_latency() {
  local n=$1 budget=$2
  [ -f .devdata/nvidia.csv.gz ] && cp .devdata/nvidia.csv.gz "$RES/"
  cli "$budget" engine.latency.cli measure --repeat data/latency/lavapipe.csv.gz \
    --cells "$n" --litert-threads 0 --no-progress --out "$RES/nvidia.csv.gz"
}

step_fixed() { # the host's fixed cost of run() on this adapter (engine-latency measure-fixed)
  cli 120 engine.latency.cli measure-fixed --out "$RES/fixed.json"
}

step_appmodels() { # the app's three models, measured as the dataset's rows are
  cli 90 engine.latency.cli measure --models "${MODELS[@]}" --litert-threads 0 --no-progress \
    --out "$RES/models.csv.gz"
}

step_cells() { # cells N S K: the lavapipe dataset's first N cells in at most S seconds, K
  # processes each on its own shard, taking turns on the GPU (--lock) while the others build
  # and compile; one dataset per shard ($RES/cellsN-I.csv.gz: a later `cells` of another N
  # measures again, the repeat), merged into one dataset afterwards, here
  local n=$1 budget=$2 k=$3 i rc=0
  local pids=()
  for ((i = 0; i < k; i++)); do
    cli "$budget" engine.latency.cli measure --repeat data/latency/lavapipe.csv.gz --cells "$n" \
      --litert-threads 0 --no-progress --shard "$i/$k" --lock /tmp/measure.lock \
      --out "$RES/cells$n-$i.csv.gz" >"$RES/cells$n-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { rc=$?; echo "shard $i/$k: exit $rc (124: its $budget s ran out)"; }
  done
  tail -n 2 "$RES"/cells"$n"-*.log
  return $rc
}

while [ $# -gt 0 ]; do
  step=$1
  shift
  echo "=== $step $(date +%T)"
  case $step in
    latency)
      step_latency "$1" "$2"
      rc=$?
      shift 2
      ;;
    cells)
      step_cells "$1" "$2" "$3"
      rc=$?
      shift 3
      ;;
    *)
      "step_$step"
      rc=$?
      ;;
  esac
  [ -n "${PACK:-}" ] && tar czf "$PACK" -C "$RES" .
  echo "=== $step done rc=$rc $(date +%T)"
done
