#!/usr/bin/env bash
# The test command (README, .ci/run): every test of the workspace, in
# release mode (field arithmetic is far too slow unoptimised). GPU tests
# print a SKIPPED line where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f build/env.sh ]; then . build/env.sh; fi
# cmake for grpcio-sys from build/install-py-grpc.sh; CMake 4 needs the policy floor.
if [ -x build/.venv/bin/cmake ]; then export PATH="$PWD/build/.venv/bin:$PATH"; fi
export CMAKE_POLICY_VERSION_MINIMUM=3.5
exec cargo test --workspace --release "$@"
