#!/usr/bin/env bash
# Builds the release `cuzk` (CLI and daemon, CUDA for the H200: sm_90) and
# packs it with nothing else as .h200/cuzk.tgz in the checkout, for the
# device tool's carry (see docs/FULL_SIZE.md). The device tool sends the
# main checkout: run this there, or pass its path.
#
#   build/h200/pack.sh [CHECKOUT]       (default: this script's checkout)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="${1:-$ROOT}/.h200"
export CUZK_REQUIRE_CUDA=1 CUZK_CUDA_ARCHS="${CUZK_CUDA_ARCHS:-90}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
# A toolchain named by NVCC (e.g. another checkout's build/cuda) is used as is.
if [ -z "${NVCC:-}" ] || [ ! -x "$NVCC" ]; then "$ROOT/build/install-nvcc.sh" >/dev/null; fi

cd "$ROOT"
json="$(mktemp)"
cargo build --release --workspace --bin cuzk --message-format=json-render-diagnostics >"$json"
exe="$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "cuzk" and m.get("executable"):
        print(m["executable"])' "$json" | tail -1)"
rm -f "$json"
tmp="$(mktemp -d)"
cp "$exe" "$tmp/cuzk"
strip --strip-debug "$tmp/cuzk"
mkdir -p "$DEST"
tar czf "$DEST/cuzk.tgz" -C "$tmp" cuzk
rm -rf "$tmp"
git -C "$ROOT" rev-parse --short HEAD >"$DEST/COMMIT"
ls -l "$DEST"
