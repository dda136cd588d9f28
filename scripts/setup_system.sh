#!/usr/bin/env bash
# System packages for webgpu-ar on Linux (Debian/Ubuntu):
#   mesa-vulkan-drivers  Mesa's lavapipe, a CPU Vulkan driver, so WebGPU works without a GPU
#   xvfb                 a virtual X server for the live window in CI / headless machines
#   python3-venv         only when `python3 -m venv` cannot bootstrap pip (Debian's python3)
# Idempotent: installs only what dpkg says is missing, running `apt-get update` once first.
# Without apt-get, root or password-less sudo it prints a warning and exits 0: the GPU
# tests then skip, and everything else still runs. In CI (CI=true) the same is an error
# (exit 1): a CI run without lavapipe would be green with every GPU test left out.
# SETUP_DRY_RUN=1 only reports what it would install.
set -uo pipefail

PYTHON=${PYTHON:-python3}
PKGS=(mesa-vulkan-drivers xvfb)

say() { echo "setup: $*"; }
warn() { echo "setup: warning: $*" >&2; }
# A package that cannot be installed: locally go on without it, in CI stop.
give_up() {
  case "${CI:-}" in
    1 | true | TRUE | True | yes)
      echo "setup: error: $* (CI=true: the tests that need it would not run)" >&2
      exit 1
      ;;
  esac
  warn "$* -- continuing without them"
  exit 0
}

if [[ $(uname -s) != Linux ]]; then
  say "$(uname -s): no system packages to install (WebGPU uses the platform's own driver)"
  exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
  give_up "no dpkg here; install Mesa's lavapipe Vulkan driver and Xvfb with your package manager"
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if command -v "$PYTHON" >/dev/null 2>&1 && ! "$PYTHON" -c "import ensurepip, venv" >/dev/null 2>&1; then
  missing+=(python3-venv)
fi

if ((${#missing[@]} == 0)); then
  say "system packages present: ${PKGS[*]}"
  exit 0
fi

if [[ ${SETUP_DRY_RUN:-0} == 1 ]]; then
  say "dry run: would apt-get update && apt-get install -y ${missing[*]}"
  exit 0
fi
if [[ $(id -u) == 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  warn "missing ${missing[*]}, and apt-get needs root (or password-less sudo):"
  give_up "  sudo apt-get install -y ${missing[*]}"
fi
if ! command -v apt-get >/dev/null 2>&1; then
  give_up "missing ${missing[*]} but there is no apt-get; install them by hand"
fi

export DEBIAN_FRONTEND=noninteractive
say "missing ${missing[*]}: running apt-get update"
if ! "${sudo[@]}" apt-get update -qq; then
  give_up "apt-get update failed; missing ${missing[*]}"
fi
say "apt-get install -y ${missing[*]}"
if ! "${sudo[@]}" apt-get install -y -qq "${missing[@]}"; then
  give_up "apt-get install failed; missing ${missing[*]}"
fi
say "installed ${missing[*]}"
