#!/usr/bin/env bash
# The test command (README, .ci/run): every test of the workspace, in
# release mode (field arithmetic is far too slow unoptimised). GPU tests
# print a SKIPPED line where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f build/env.sh ]; then . build/env.sh; fi
exec cargo test --workspace --release "$@"
