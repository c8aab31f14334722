#!/usr/bin/env bash
# Builds the Jaeger v2 all-in-one binary (the OTLP collector + query API the telemetry tests
# export to) from the Go module proxy, once: the binary, the module cache and the build cache all
# live under ~/.cache/klbr-ci, so a second run is a file check and a rebuild is warm.
# Prints the binary's path on stdout (progress goes to stderr): KLBR_TEST_JAEGER="$(... )".
set -euo pipefail

version="v1.76.0"
cache="${KLBR_CI_CACHE:-$HOME/.cache/klbr-ci}/jaeger"
bin="$cache/jaeger-$version"
go_bin="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
# The binary is moved into place only after a whole build, so its presence means a good one.

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
# Two engineers (or a CI retry) building at once would race on the same output file.
exec 9>"$cache/.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

export GOMODCACHE="$cache/gomod" GOCACHE="$cache/gobuild" GOPATH="$cache/gopath"
export GOFLAGS="-mod=mod" CGO_ENABLED=0
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
(
  cd "$work"
  "$go_bin" mod init t >/dev/null 2>&1
  "$go_bin" get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$version" >&2
  "$go_bin" build -trimpath -o "$bin.tmp" github.com/jaegertracing/jaeger/cmd/jaeger >&2
)
mv "$bin.tmp" "$bin"
echo "setup-jaeger: built $bin in $(( $(date +%s) - start ))s" >&2
echo "$bin"
