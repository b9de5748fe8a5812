#!/usr/bin/env bash
# Runs on the GPU machine from a bundle made by build/gpu-bundle.sh: every
# GPU test binary, then the benchmarks. Full logs go to $OUT (or ./gpu-out);
# a short table is printed last.
#
#   bash .gpu-bundle/run.sh [--quick] [--no-bench] [--only-bench]
#   ONLY="h_term api" bash .gpu-bundle/run.sh      (just these test binaries)
#   CUZK_PARTITION_LOG_N=27 ONLY=gpu_partition bash .gpu-bundle/run.sh --no-bench
#       (the 2^27 partition run: ~5 min, ~80 GB of host memory; the default
#        size is 2^16)
#   ENGINE="synthetic:1000000" bash .gpu-bundle/run.sh --only-bench
#       (engine benchmark: gw = 1, 2, 3, then a 16 GiB VRAM limit; ENGINE=
#        skips it, ENGINE_JOBS / ENGINE_PARTITIONS size the stream)
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# This is the GPU machine: a test that cannot use the GPU (no device, a
# driver error, a build without nvcc, an engine fallen back to the CPU)
# fails here instead of printing SKIPPED and passing
# (cuzk_sys::test_skip). CUZK_REQUIRE_GPU=0 runs them as anywhere else.
export CUZK_REQUIRE_GPU="${CUZK_REQUIRE_GPU:-1}"
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
QUICK=""; TESTS=1; BENCH=1
for a in "$@"; do
    case "$a" in
        --quick) QUICK="--quick" ;;
        --no-bench) BENCH=0 ;;
        --only-bench) TESTS=0 ;;
    esac
done

{ nvidia-smi; nvidia-smi -q -d CLOCK,POWER | head -60; } >"$OUT/nvidia-smi.txt" 2>&1
echo "bundle commit: $(cat "$HERE/COMMIT" 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader

# Tests built with absolute paths (the daemon binary, tests/data) find them
# where the build had them: link the build's checkout path to this one.
if [ -f "$HERE/ROOT" ] && [ ! -e "$(cat "$HERE/ROOT")" ]; then
    mkdir -p "$(dirname "$(cat "$HERE/ROOT")")" && ln -s "$PWD" "$(cat "$HERE/ROOT")"
fi
if [ -f "$HERE/DAEMON_PATH" ] && [ -x "$HERE/bin/cuzk-daemon" ]; then
    mkdir -p "$(dirname "$(cat "$HERE/DAEMON_PATH")")" && cp "$HERE/bin/cuzk-daemon" "$(cat "$HERE/DAEMON_PATH")"
fi

summary=()
if [ "$TESTS" = 1 ]; then
    for t in "$HERE"/tests/*; do
        name="$(basename "$t")"
        if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
        start=$(date +%s)
        "$t" --test-threads=1 --nocapture >"$OUT/test-$name.log" 2>&1
        rc=$?
        secs=$(( $(date +%s) - start ))
        result="$(grep -E '^test result:' "$OUT/test-$name.log" | tail -1)"
        skipped="$(grep -c '^SKIPPED' "$OUT/test-$name.log")"
        summary+=("| test $name | rc=$rc | ${secs}s | $result | skipped lines: $skipped |")
        echo "== $name: rc=$rc ${secs}s $result"
        grep -E '^(NTT|H term|MSM|Fr|Fp|Fp2|SKIPPED|partition|baseline|out of memory at|invalid configuration at|illegal address|\| (resident|batch|[0-9.]+ GiB limit)|density)|panicked|FAILED|differs' "$OUT/test-$name.log" | head -40
    done
fi
if [ "$BENCH" = 1 ]; then
    for b in "$HERE"/benches/*; do
        name="$(basename "$b")"
        "$b" $QUICK >"$OUT/bench-$name.log" 2>&1
        echo "== bench $name: rc=$?"
    done
fi

ENGINE="${ENGINE-synthetic:1000000}"
if [ "$BENCH" = 1 ] && [ -n "$ENGINE" ] && [ -x "$HERE/bin/cuzk" ]; then
    "$HERE/bin/cuzk" bench engine --circuit "$ENGINE" --jobs "${ENGINE_JOBS:-12}" --partitions "${ENGINE_PARTITIONS:-1}" \
        --gpu-workers 1,2,3 --vram-limit "${ENGINE_VRAM:-0,16GiB,512MiB}" --synthesis-concurrency "${ENGINE_SYNTH:-16}" --timeline-dir "$OUT" >"$OUT/engine.log" 2>&1
    echo "== engine bench: rc=$?"
fi

echo
echo "## summary"
for s in "${summary[@]}"; do echo "$s"; done
for f in "$OUT"/bench-*.log; do
    [ -f "$f" ] || continue
    echo; echo "### $(basename "$f")"
    grep -E '^device:' "$f"
    sed -n '/^| what/,$p' "$f"
done
if [ -f "$OUT/engine.log" ]; then
    echo; echo "### engine.log"
    grep -E '^(gw=|\|)|rror' "$OUT/engine.log" | tail -20
fi

# The device tool returns at most 8 files: pack the logs into one.
(cd "$OUT" && tar czf logs.tgz --exclude=logs.tgz --exclude=run.log -- * 2>/dev/null \
    && find . -maxdepth 1 -type f ! -name logs.tgz ! -name run.log -delete)
