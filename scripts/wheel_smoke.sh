#!/usr/bin/env bash
# The wheel as a new user meets it: build it, install it into a fresh venv outside the
# repo, and from another directory run one inference through `from engine import Engine`,
# ar-demo on a model (3 headless frames) and every console script's --help.
# usage: scripts/wheel_smoke.sh [SCRATCH_DIR]   (default: a new temporary folder)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${1:-$(mktemp -d)}"
PYTHON="${PYTHON:-python3}"
MODEL="$ROOT/models/face_detection_short_range.tflite"
CLIP="$ROOT/assets/sample.mp4"
for f in "$MODEL" "$CLIP"; do
    [ -f "$f" ] || { echo "wheel_smoke: $f missing: run make models assets" >&2; exit 2; }
done

echo "wheel_smoke: building the wheel"
mkdir -p "$SCRATCH/dist" "$SCRATCH/elsewhere"
"$PYTHON" -m pip wheel --quiet --no-deps -w "$SCRATCH/dist" "$ROOT"
WHEEL=$(ls "$SCRATCH"/dist/webgpu_ar-*.whl)
echo "wheel_smoke: $(basename "$WHEEL"): $(unzip -l "$WHEEL" | grep -c '\.wgsl$') .wgsl files"

echo "wheel_smoke: installing it into a fresh venv"
"$PYTHON" -m venv "$SCRATCH/venv"
"$SCRATCH/venv/bin/pip" install --quiet "$WHEEL"

cd "$SCRATCH/elsewhere"
echo "wheel_smoke: one inference from $(pwd)"
"$SCRATCH/venv/bin/python" - "$MODEL" <<'PY'
import sys

import numpy as np

import engine
from engine import Engine

assert "site-packages" in engine.__file__, engine.__file__
e = Engine.from_tflite(sys.argv[1])
out = e.run({"input": np.zeros((1, 128, 128, 3), np.float32)})
assert {k: v.shape for k, v in out.items()} == {"regressors": (1, 896, 16), "classificators": (1, 896, 1)}
print(f"wheel_smoke: {e.graph.name}: {e.dispatch_count} dispatches on {e.ctx.name}, ok")
PY
for tool in ar-demo engine-bench engine-inspect engine-extract engine-fetch; do
    "$SCRATCH/venv/bin/$tool" --help >/dev/null
done
"$SCRATCH/venv/bin/engine-fetch" where
"$SCRATCH/venv/bin/ar-demo" --model "$MODEL" --input "$CLIP" --headless --frames 3 \
    --output "$SCRATCH/elsewhere/out.mp4" --no-progress
echo "wheel_smoke: ok"
