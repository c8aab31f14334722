#!/usr/bin/env bash
# The Python MCP SDK (`mcp` from PyPI) for the klbr mcp tests (issue 40): its ClientSession drives
# `klbr mcp` over stdio and Streamable HTTP as a Python agent would. Cached across CI runs
# under ~/.cache/klbr-ci/mcp/:
#   venv-<version>-<python tag>/   a dedicated venv (the system python stays untouched)
#   python.json   {python, version}: where the tests find it
# Idempotent: with a warm cache it only checks the stamp and the import (a second or so).
set -euo pipefail

MCP_VERSION="${KLBR_MCP_PYTHON_VERSION:-2.3.0}"
CACHE="${KLBR_MCP_PYTHON_CACHE:-$HOME/.cache/klbr-ci/mcp}"

PY="$(python3 -c 'import sys; print(sys.executable)')"
PYTAG="$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
VENV="$CACHE/venv-$MCP_VERSION-$PYTAG"
STAMP="$VENV/.klbr-ready"
mkdir -p "$CACHE"

log() { echo "[setup-mcp-python] $*"; }

write_python_json() {
  "$VENV/bin/python" - "$CACHE/python.json" "$VENV/bin/python" "$MCP_VERSION" <<'PYEOF'
import json, os, sys
out, python, version = sys.argv[1:4]
tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump({"python": python, "version": version}, f)
    f.write("\n")
os.replace(tmp, out)
PYEOF
}

check() { "$VENV/bin/python" -c 'import mcp, mcp.client.stdio, mcp.client.streamable_http; from mcp import ClientSession' 2>/dev/null; }

if [ -f "$STAMP" ] && check; then
  write_python_json
  log "cached: mcp $MCP_VERSION ($VENV)"
  exit 0
fi

if ! "$PY" -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update && apt-get install -y python3-venv
fi
if [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
fi
log "installing mcp==$MCP_VERSION into $VENV"
"$VENV/bin/python" -m pip --disable-pip-version-check --no-input install --quiet "mcp==$MCP_VERSION"
"$VENV/bin/python" -c 'import mcp, mcp.client.stdio, mcp.client.streamable_http; from mcp import ClientSession'
touch "$STAMP"
write_python_json
log "ready: mcp $MCP_VERSION ($VENV)"
