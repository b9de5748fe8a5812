#!/usr/bin/env bash
# The README's first command: installs what the build needs (Rust if
# missing, nvcc and libclang, cmake for gRPC C-core) into the project, then
# runs `cuzk demo`: setup of an embedded circuit, the daemon on a temporary
# unix socket, proofs through its gRPC API, verification, a timing table.
# The engine proves on the GPU when there is one, else on the CPU.
#   build/demo.sh [demo options, e.g. --circuit synthetic:2^20 --count 8]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null; then
    [ -f "$HOME/.cargo/env" ] || curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    . "$HOME/.cargo/env"
fi
build/install-nvcc.sh
build/install-py-grpc.sh >/dev/null
export PATH="$PWD/build/.venv/bin:$PATH" CMAKE_POLICY_VERSION_MINIMUM=3.5
exec cargo run --release -p cuzk-bin --bin cuzk -- demo "$@"
