#!/usr/bin/env bash
# A side venv for engine-bench's ONNX Runtime peer: onnxruntime-webgpu (the WebGPU EP
# build; falls back to CPU where Dawn finds no adapter) and tflite2onnx (the converter).
# Kept apart from the project venv: they pull onnx/protobuf that the engine never needs.
#   bash scripts/onnx_venv.sh [VENV_DIR]      (default /tmp/webgpu-ar-onnx)
#   export ENGINE_BENCH_ONNX_PYTHON=/tmp/webgpu-ar-onnx/bin/python
set -euo pipefail
VENV="${1:-/tmp/webgpu-ar-onnx}"
PYTHON="${PYTHON:-python3}"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# onnxruntime-webgpu has wheels for a few platforms only; plain onnxruntime (CPU) otherwise.
"$VENV/bin/python" -m pip install --quiet onnxruntime-webgpu tflite2onnx \
  || "$VENV/bin/python" -m pip install --quiet onnxruntime tflite2onnx
"$VENV/bin/python" -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())"
echo "export ENGINE_BENCH_ONNX_PYTHON=$VENV/bin/python"
