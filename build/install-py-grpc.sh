#!/usr/bin/env bash
# Project-local Python tools in build/.venv: grpcio + grpcio-tools (the
# independent client of the daemon tests) and cmake (grpcio-sys builds
# gRPC C-core with it). Idempotent; CI (.ci/run) calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x build/.venv/bin/python ]; then
    "$PY" -m venv build/.venv
fi
if ! build/.venv/bin/python -c "import grpc, grpc_tools" 2>/dev/null || [ ! -x build/.venv/bin/cmake ]; then
    build/.venv/bin/pip install --quiet --disable-pip-version-check grpcio grpcio-tools cmake
fi
build/.venv/bin/python -c "import grpc; print('python grpcio', grpc.__version__)"
build/.venv/bin/cmake --version | head -1
