#!/usr/bin/env bash
# The project on the other Python versions this machine has, without downloading one: for
# each of VERSIONS (default "3.12 3.13") found (pyenv's versions, else python3.X on PATH),
#   1. a fresh venv with the wheel built by that interpreter and installed with the `test`
#      extra from PyPI (ai-edge-litert, wgpu, ... must install for it);
#   2. the no-GPU part of the fast tier (-m "not gpu and not gl and not slow") run from the
#      checkout with every adapter hidden (no Vulkan ICD, no EGL vendor): a test that needs
#      one without its marker fails there;
#   3. scripts/wheel_smoke.sh with that interpreter: one inference from outside the repo
#      (on the adapter), ar-demo on 3 frames, every command's --help.
# An absent interpreter is skipped with a line saying so; the last line says which ran.
# usage: scripts/other_pythons.sh [SCRATCH_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${1:-$(mktemp -d)}"
VERSIONS="${VERSIONS:-3.12 3.13}"
PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}"
say() { echo "other_pythons: $*"; }

find_python() {  # the interpreter of version $1 (e.g. 3.12), or nothing
    local candidate
    for candidate in "$PYENV_ROOT"/versions/"$1".*/bin/python"$1" "$(command -v "python$1" || true)"; do
        if [[ -n $candidate && -x $candidate ]] && "$candidate" -c 'import venv' 2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
}

ran=() absent=()
for version in $VERSIONS; do
    py="$(find_python "$version")"
    if [[ -z $py ]]; then
        say "Python $version: not on this machine, skipped"
        absent+=("$version")
        continue
    fi
    full="$("$py" -c 'import platform; print(platform.python_version())')"
    say "Python $full ($py)"
    venv="$SCRATCH/venv-$version"
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip wheel --quiet --no-deps -w "$SCRATCH/dist-$version" "$ROOT"
    wheel="$(ls "$SCRATCH/dist-$version"/webgpu_ar-*.whl)"
    "$venv/bin/python" -m pip install --quiet "$wheel[test]"
    say "Python $full: $(basename "$wheel") installed with [test]; the no-GPU fast tier:"
    (cd "$ROOT" && CI=true VK_ICD_FILENAMES=/nonexistent.json \
        __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json \
        "$venv/bin/python" -m pytest -q -p no:cacheprovider -m "not gpu and not gl and not slow")
    PYTHON="$py" "$ROOT/scripts/wheel_smoke.sh" "$SCRATCH/smoke-$version"
    ran+=("$full")
done
say "ran on: ${ran[*]:-none}; absent: ${absent[*]:-none}"
