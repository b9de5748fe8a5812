#!/usr/bin/env bash
# Runs on the GPU machine from a bundle made by build/gpu-bundle.sh (which
# copies this file as run-ntt.sh): the cuzk-sys field, API and H-term GPU
# tests, the NTT/H bench (gpu_ntt), then the ntt test.
set -uo pipefail
H="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The GPU machine: a GPU skip is a failure here (as in gpu-run.sh).
export CUZK_REQUIRE_GPU="${CUZK_REQUIRE_GPU:-1}"
OUT="${OUT:-$PWD/gpu-out}"; mkdir -p "$OUT"
echo "bundle commit: $(cat "$H/COMMIT")"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader
run() {
    local name=$1; shift
    local start=$(date +%s)
    "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    echo "== $name rc=$rc $(( $(date +%s) - start ))s $(grep -E '^test result:' "$OUT/$name.log" | tail -1)"
    grep -E 'panicked|FAILED|differs|^NTT|^H term|^SKIPPED' "$OUT/$name.log" | head -12
}
run test-field_ops "$H/tests/field_ops" --test-threads=1 --nocapture
run test-api "$H/tests/api" --test-threads=1
run test-h_term "$H/tests/h_term" --test-threads=1 --nocapture
run bench-gpu_ntt "$H/benches/gpu_ntt" ${BENCH_ARGS:-}
sed -n '/^| what/,$p' "$OUT/bench-gpu_ntt.log"
run test-ntt "$H/tests/ntt" --test-threads=1 --nocapture
echo done
