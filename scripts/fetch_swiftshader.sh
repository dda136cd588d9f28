#!/usr/bin/env bash
# Fetch SwiftShader, Google's CPU Vulkan driver, for benchmarks only (never a runtime
# dependency): Debian's chromium-common package ships libvk_swiftshader.so and its ICD
# JSON. Downloads the .deb with `apt-get download` into a cache folder, unpacks it with
# `dpkg -x`, and prints the ICD JSON's path (stdout, one line). Idempotent.
#
#   bash scripts/fetch_swiftshader.sh [DIR]     # DIR: default ~/.cache/webgpu-ar/swiftshader
#   export VK_ICD_FILENAMES=$(bash scripts/fetch_swiftshader.sh)
#   engine-bench models/face_detection_short_range.tflite --peers litert-gpu
#       # the engine now reports "SwiftShader Device (Subzero)"; LiteRT's GPU
#       # accelerator (Dawn) accepts this driver, unlike lavapipe
set -euo pipefail

dest="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/webgpu-ar/swiftshader}"
mkdir -p "$dest"
cd "$dest"
find_icd() { { find "$dest/root" -name vk_swiftshader_icd.json 2>/dev/null || true; } | head -n 1; }

icd="$(find_icd)"
if [ -z "$icd" ]; then
  if ! ls chromium-common_*.deb >/dev/null 2>&1; then
    # apt-get download runs as the calling user; as root it warns that _apt cannot
    # write here, which is harmless.
    if ! apt-get download chromium-common >&2; then
      echo "fetch_swiftshader: apt-get download chromium-common failed" \
           "(run 'apt-get update' first?)" >&2
      exit 1
    fi
  fi
  deb="$(ls chromium-common_*.deb | head -n 1)"
  dpkg -x "$deb" root
  icd="$(find_icd)"
fi
if [ -z "$icd" ]; then
  echo "fetch_swiftshader: no vk_swiftshader_icd.json in $dest/root" >&2
  exit 1
fi
echo "$icd"
