#!/usr/bin/env bash
# One Filecoin proof end to end with our own parameters, at any sector size:
#   1. workload  cuzk filecoin-workload (valid production-shape input)
#   2. setup     cuzk filecoin-setup --toxic-seed N --save-pce (R1CS recorded
#                from the blank circuit, saved as <id>.pce where the engine
#                loads it; .params/.vk streamed into the param cache; the
#                fixed-base multiplications on the GPU when there is one)
#   3. daemon    cuzk --config (the daemon on that param cache)
#   4. srs       cuzk preload (the SRS read into host memory)
#   5. prove     cuzk single (the request Curio sends), proof to a file
#   6. verify    cuzk filecoin-verify (filecoin-proofs' own verifier, our .vk)
#   7. stream    (STREAM=N) N more proofs of the same request submitted at
#                once: proofs/hour at steady state, GPU busy, each verified
# and prints, per phase: wall time, the peak RSS of its process, the host's
# peak memory in use, the GPU's peak memory in use, and the disk in use
# after it; then the daemon's per-partition timings and memory decisions.
#
#   KIND=porep SIZE=32GiB DIR=/tmp/fil-e2e BUDGET=110GiB build/h200/fil-e2e.sh
#
# Environment (defaults in brackets):
#   KIND [porep]  porep, window, winning or snap
#   SIZE [2KiB]   2KiB, 8MiB, 512MiB, 32GiB or 64GiB
#   DIR [/tmp/fil-e2e-$KIND-$SIZE]  work folder: workload/, params/, logs
#   CUZK          the cuzk binary [bin/cuzk beside this script's bundle, else
#                 target/release/cuzk of the checkout]
#   BUDGET [auto] the daemon's memory.total_budget. Set it on VMs whose
#                 MemTotal starts small and grows (the H200 machines: 110GiB)
#   VRAM_LIMIT [0] gpus.vram_limit ("16GiB": a small card)
#   GPUS [all]    the GPUs the daemon proves on (gpus.devices), e.g. "0" or
#                 "0,1"; the samples take the largest GPU memory in use among
#                 them and their mean busy %
#   SEED [1]  workload seed;  TOXIC_SEED [1]  setup's toxic-waste seed
#   SETUP_FLAGS  extra filecoin-setup flags (e.g. --cpu)
#   SAVE_PCE [1]  0: setup does not write the .pce (the daemon records it at
#                 the first proof): WindowPoSt 32 GiB's params and .pce
#                 together outgrow the GPU host's 64 GiB disk
#   PARAMS        a param cache to use [DIR/params]; setup is skipped when it
#                 holds the circuit's .params and .vk, and it is never deleted
#   STREAM [0]    after the single proof, N proofs submitted together
#   SINGLE [1]    0: no single proof before the stream (its first proof is
#                 then the cold one; needs STREAM)
#   UNDER_LOAD    kinds proved once while the stream runs (e.g. "winning"):
#                 their workload and setup at SIZE in the same param cache,
#                 submitted after the stream's first completion, timed and
#                 verified (without STREAM: after the single proof)
#   SYNTH=1       after setup, partition 0's PCE path alone, without the
#                 daemon (cuzk-bench synth-only --witness-only --no-classic):
#                 its PCE load, witness-only synthesis on 1 and all threads,
#                 CPU SpMV on 1 and all threads (SYNTH_THREADS: another
#                 list, e.g. "1,2,4,8,16")
#   NICE          the daemon's synthesis.nice [its default, 10]; 0: synthesis
#                 at the daemon's priority (to compare)
#   LOG_LEVEL [info]  the daemon's [logging] level (directives too, e.g.
#                 "info,cuzk_core::groth16::gpu_prover=debug": per-phase GPU times)
#   KEEP_PARAMS=1 keep DIR/params at the end (default: deleted when the run
#                 passed, as they are 47 GiB at 32 GiB PoRep)
# A setup already done in DIR/params for the same kind, size and toxic seed
# is reused (params/setup.done), so a run cut short can be started again.
# Exit status: 0 when the verifier accepts the proof; otherwise the failing
# phase's. $DIR/summary.txt holds the table; $DIR/rc the exit status.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KIND="${KIND:-porep}"
SIZE="${SIZE:-2KiB}"
DIR="${DIR:-/tmp/fil-e2e-$KIND-$SIZE}"
SEED="${SEED:-1}"
TOXIC_SEED="${TOXIC_SEED:-1}"
BUDGET="${BUDGET:-auto}"
VRAM_LIMIT="${VRAM_LIMIT:-0}"
SETUP_FLAGS="${SETUP_FLAGS:-}"
SAVE_PCE_FLAG="--save-pce"; [ "${SAVE_PCE:-1}" = 0 ] && SAVE_PCE_FLAG=""
if [ -z "${CUZK:-}" ]; then
    for c in "$HERE/../bin/cuzk" "$HERE/bin/cuzk" "$HERE/../../target/release/cuzk"; do
        if [ -x "$c" ]; then CUZK="$c"; break; fi
    done
fi
if [ -z "${CUZK:-}" ] || [ ! -x "$CUZK" ]; then
    echo "fil-e2e: no cuzk binary: set CUZK=/path/to/cuzk" >&2
    exit 2
fi

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
W="$DIR/workload"
P="${PARAMS:-$DIR/params}"
SUMMARY="$DIR/summary.txt"
SAMPLES="$DIR/samples.tsv"
rm -f "$DIR/rc" "$SUMMARY" "$SAMPLES" "$DIR/proof.bin"
mkdir -p "$W" "$P"
GPU=0
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && GPU=1

now() { date +%s.%N; }
# Host memory in use (MiB); GPU memory in use (MiB) and utilization (%),
# "0 0" without a GPU.
host_used_mib() { awk '/^MemTotal:/ {t=$2} /^MemAvailable:/ {a=$2} END {printf "%d", (t-a)/1024}' /proc/meminfo; }
gpu_used_and_busy() {
    if [ "$GPU" = 1 ]; then
        nvidia-smi ${GPUS:+-i "$GPUS"} --query-gpu=memory.used,utilization.gpu --format=csv,noheader,nounits 2>/dev/null |
            awk -F', *' '{ if ($1 > m) m = $1; u += $2; n++ } END { if (n) printf "%d\t%.0f\n", m, u / n; else printf "0\t0\n" }'
    else printf '0\t0\n'; fi
}
# One sample a second for the whole run: time, host MiB, GPU MiB, GPU busy %.
(
    while :; do
        printf '%s\t%s\t%s\n' "$(now)" "$(host_used_mib)" "$(gpu_used_and_busy)" >>"$SAMPLES"
        sleep 1
    done
) &
SAMPLER=$!
DAEMON=""
cleanup() {
    kill "$SAMPLER" 2>/dev/null
    if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then
        kill -TERM "$DAEMON"
        for _ in $(seq 60); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 1; done
        kill -KILL "$DAEMON" 2>/dev/null
    fi
}
trap cleanup EXIT

ROWS=()
disk_used() { du -sh "$DIR" 2>/dev/null | cut -f1; }
# Peak host/GPU MiB over [t0, t1] from the samples.
# "-" when the phase was shorter than a sample.
peaks() {
    awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b + 1 { n++; if ($2 > h) h = $2; if ($3 > g) g = $3 }
        END { if (n) printf "%d\t%d", h, g; else printf "-\t-" }' "$SAMPLES"
}
# Mean GPU utilization (%) over [t0, t1]: the share of each second a kernel ran.
gpu_busy() {
    awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b { n++; u += $4 } END { if (n) printf "%.0f", u / n; else printf "-" }' "$SAMPLES"
}
# row NAME T0 T1 PEAK_RSS_KIB RC NOTE
row() {
    local pk
    pk="$(peaks "$2" "$3")"
    local secs
    secs="$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", b - a }')"
    ROWS+=("$(printf '| %-8s | %8s | %9s | %9s | %9s | %6s | %s | %s |' "$1" "$secs" \
        "$(( ${4:-0} / 1024 ))" "$(cut -f1 <<<"$pk")" "$(cut -f2 <<<"$pk")" "$(disk_used)" "$5" "$6")")
    echo "== $1: rc=$5 $secs s, process peak $(( ${4:-0} / 1024 )) MiB, disk $(disk_used) $6"
}
# Runs a phase's command, its output to $DIR/NAME.log (and the terminal),
# polling its peak RSS (VmHWM) while it runs.
phase() {
    local name="$1"; shift
    echo "== $name: $*"
    local t0 hwm=0 rc
    t0="$(now)"
    "$@" > >(tee "$DIR/$name.log") 2>&1 &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        local h
        h="$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null)"
        [ -n "$h" ] && hwm="$h"
        sleep 0.5
    done
    wait "$pid"; rc=$?
    row "$name" "$t0" "$(now)" "$hwm" "$rc" ""
    return "$rc"
}
finish() {
    local rc="$1"
    {
        echo "## fil-e2e $KIND $SIZE: $( [ "$rc" = 0 ] && echo PASSED || echo "FAILED (rc $rc)")"
        echo "cuzk $("$CUZK" --version 2>/dev/null | awk '{print $2}'), $(nproc) cores, budget $BUDGET, vram_limit $VRAM_LIMIT, gpus ${GPUS:-all}, dir $DIR"
        echo
        echo "| phase | wall s | process peak RSS MiB | host peak used MiB | GPU peak used MiB | disk after | rc | |"
        echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
        for r in "${ROWS[@]}"; do echo "$r"; done
        if [ -f "$DIR/daemon.log" ]; then
            echo
            echo "### daemon: partitions, SRS, PCE, memory"
            grep -E "GPU found|engine started|srs loaded|pce (loaded|recorded|rebuild|not|unavailable)|partition synthesized|partition proved|batch waits|memory|budget|on the host|job .*(completed|failed)|self.check|rror|panicked" "$DIR/daemon.log" | cut -c1-400 | tail -60
        fi
        [ -f "$DIR/prove.log" ] && { echo; echo "### prove"; cat "$DIR/prove.log"; }
        [ -f "$DIR/verify.log" ] && { echo; echo "### verify"; tail -3 "$DIR/verify.log"; }
        echo
        echo "### disk"
        ls -la "$W" "$P" 2>/dev/null
        df -h "$DIR" 2>/dev/null
    } | tee "$SUMMARY"
    if [ "$rc" = 0 ] && [ -z "${KEEP_PARAMS:-}" ] && [ -z "${PARAMS:-}" ]; then rm -rf "$P"; fi
    echo "$rc" >"$DIR/rc"
    exit "$rc"
}

echo "fil-e2e: $KIND $SIZE in $DIR with $CUZK ($(nproc) cores, GPU: $GPU)"
free -g 2>/dev/null | head -2
df -h "$DIR"
[ "$GPU" = 1 ] && nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader

# 1. workload
phase workload "$CUZK" filecoin-workload --kind "$KIND" --sector-size "$SIZE" --seed "$SEED" --out "$W" || finish $?

# 2. setup (reused when done for the same circuit and toxic seed)
ID="$("$CUZK" filecoin-setup --kind "$KIND" --sector-size "$SIZE" --param-cache "$P" --dry-run | head -1 | sed 's/^[^:]*: //')"
[ -n "$ID" ] || finish 2
DONE="$KIND $SIZE $ID toxic-seed $TOXIC_SEED"
if [ -n "${PARAMS:-}" ] && [ -f "$P/v28-$ID.params" ] && [ -f "$P/v28-$ID.vk" ]; then
    echo "== setup: using the given param cache $P"
    ROWS+=("| setup | given | | | | $(disk_used) | 0 | $P |")
elif [ -f "$P/setup.done" ] && [ "$(cat "$P/setup.done")" = "$DONE" ] && [ -f "$P/v28-$ID.vk" ]; then
    echo "== setup: reusing $P ($DONE)"
    ROWS+=("| setup | reused | | | | $(disk_used) | 0 | $DONE |")
else
    rm -f "$P/setup.done"
    # shellcheck disable=SC2086
    phase setup "$CUZK" filecoin-setup --kind "$KIND" --sector-size "$SIZE" --param-cache "$P" \
        --toxic-seed "$TOXIC_SEED" $SAVE_PCE_FLAG $SETUP_FLAGS || finish $?
    echo "$DONE" >"$P/setup.done"
fi

# 2b. the kinds proved under load: their own workload, setup in the same cache
read -r -a LOAD_KINDS <<<"${UNDER_LOAD:-}"
declare -A LOAD_ID
for K in "${LOAD_KINDS[@]}"; do
    phase "work-$K" "$CUZK" filecoin-workload --kind "$K" --sector-size "$SIZE" --seed "$SEED" --out "$DIR/load-$K" || finish $?
    LOAD_ID[$K]="$("$CUZK" filecoin-setup --kind "$K" --sector-size "$SIZE" --param-cache "$P" --dry-run | head -1 | sed 's/^[^:]*: //')"
    [ -n "${LOAD_ID[$K]}" ] || finish 2
    KDONE="$K $SIZE ${LOAD_ID[$K]} toxic-seed $TOXIC_SEED"
    if [ "$(cat "$P/setup-$K.done" 2>/dev/null)" != "$KDONE" ] || [ ! -f "$P/v28-${LOAD_ID[$K]}.vk" ]; then
        # shellcheck disable=SC2086
        phase "setup-$K" "$CUZK" filecoin-setup --kind "$K" --sector-size "$SIZE" --param-cache "$P" \
            --toxic-seed "$TOXIC_SEED" $SAVE_PCE_FLAG $SETUP_FLAGS || finish $?
        echo "$KDONE" >"$P/setup-$K.done"
    fi
done

# The `cuzk single` arguments a workload's meta.json holds, one per line.
single_args() { python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["cuzk_single"]))' "$1"; }
# 2c. partition 0's PCE path alone (synth-only answers to the name cuzk-bench)
if [ -n "${SYNTH:-}" ]; then
    ln -sf "$CUZK" "$DIR/cuzk-bench"
    mapfile -t SYNTH_ARGS < <(single_args "$W/meta.json")
    phase synth "$DIR/cuzk-bench" synth-only "${SYNTH_ARGS[@]}" --witness-only --no-classic \
        --threads "${SYNTH_THREADS:-1,$(nproc)}" --pce "$P/$ID.pce" || finish $?
fi

# 3. daemon
SOCK="$DIR/cuzk.sock"
rm -f "$SOCK"
if [ "$VRAM_LIMIT" = 0 ]; then VRAM_LINE="vram_limit = 0"; else VRAM_LINE="vram_limit = \"$VRAM_LIMIT\""; fi
cat >"$DIR/cuzk.toml" <<EOF
[daemon]
listen = "unix://$SOCK"
[srs]
param_cache = "$P"
# Our setup wrote these files: the subgroup checks (minutes at 32 GiB) are skipped.
trusted_params = true
self_check = true
[memory]
total_budget = "$BUDGET"
[gpus]
$VRAM_LINE
${GPUS:+devices = [$GPUS]}
[synthesis]
${NICE:+nice = $NICE}
[logging]
level = "${LOG_LEVEL:-info}"
timeline = "$DIR/timeline.jsonl"
EOF
t0="$(now)"
"$CUZK" --config "$DIR/cuzk.toml" >"$DIR/daemon.log" 2>&1 &
DAEMON=$!
for _ in $(seq 600); do
    grep -q "cuzk-daemon ready" "$DIR/daemon.log" && break
    kill -0 "$DAEMON" 2>/dev/null || break
    sleep 0.2
done
if ! grep -q "cuzk-daemon ready" "$DIR/daemon.log"; then
    cat "$DIR/daemon.log"
    row daemon "$t0" "$(now)" 0 1 "did not start"
    finish 1
fi
row daemon "$t0" "$(now)" "$(awk '/^VmHWM:/ {print $2}' "/proc/$DAEMON/status")" 0 ""
export CUZK_ADDR="unix://$SOCK"

# 4. SRS into host memory (and the daemon's peak RSS after it)
daemon_hwm() { awk '/^VmHWM:/ {print $2}' "/proc/$DAEMON/status" 2>/dev/null; }
t0="$(now)"
"$CUZK" preload -c "v28-$ID" 2>&1 | tee "$DIR/srs.log"
rc=${PIPESTATUS[0]}
row srs "$t0" "$(now)" "$(daemon_hwm)" "$rc" "(daemon RSS)"
[ "$rc" = 0 ] || finish "$rc"
for K in "${LOAD_KINDS[@]}"; do
    t0="$(now)"
    "$CUZK" preload -c "v28-${LOAD_ID[$K]}" >"$DIR/srs-$K.log" 2>&1
    rc=$?
    row "srs-$K" "$t0" "$(now)" "$(daemon_hwm)" "$rc" "(daemon RSS)"
    [ "$rc" = 0 ] || finish "$rc"
done

# 5. prove: the request the workload wrote (meta.json's cuzk_single)
ONE_PROOF="${SINGLE:-1}"
mapfile -t SINGLE < <(single_args "$W/meta.json")
if [ "$ONE_PROOF" != 0 ] || [ "${STREAM:-0}" = 0 ]; then
    t0="$(now)"
    "$CUZK" single "${SINGLE[@]}" --out "$DIR/proof.bin" 2>&1 | tee "$DIR/prove.log"
    rc=${PIPESTATUS[0]}
    row prove "$t0" "$(now)" "$(daemon_hwm)" "$rc" "(daemon RSS)"
    [ "$rc" = 0 ] || finish "$rc"
    "$CUZK" status >"$DIR/status.txt" 2>&1

    # 6. filecoin-proofs' verifier with our .vk
    phase verify "$CUZK" filecoin-verify --workload "$W" --proof "$DIR/proof.bin" --param-cache "$P" || finish $?
fi

# Each UNDER_LOAD kind's proof, timed (its latency: WinningPoSt has seconds).
prove_under_load() {
    for K in "${LOAD_KINDS[@]}"; do
        local args t0 rc
        mapfile -t args < <(single_args "$DIR/load-$K/meta.json")
        t0="$(now)"
        "$CUZK" single "${args[@]}" --out "$DIR/load-$K.bin" >"$DIR/load-$K.log" 2>&1
        rc=$?
        row "load-$K" "$t0" "$(now)" "$(daemon_hwm)" "$rc" "$K while $( [ "$STREAM" -gt 0 ] && echo "the stream runs" || echo "idle"): $(grep -E '^timings' "$DIR/load-$K.log")"
        LOAD_RC=$(( LOAD_RC | rc ))
    done
}
verify_under_load() {
    for K in "${LOAD_KINDS[@]}"; do
        phase "verify-$K" "$CUZK" filecoin-verify --workload "$DIR/load-$K" --proof "$DIR/load-$K.bin" --param-cache "$P" || finish $?
    done
}
LOAD_RC=0

# 7. stream: STREAM proofs of the same request submitted together. The rate at
# steady state is taken between the first and the last completion (the first
# proof's fill of the pipeline left out): (N - 1) proofs in that time.
STREAM="${STREAM:-0}"
if [ "$STREAM" -gt 0 ]; then
    echo "== stream: $STREAM proofs submitted together"
    t0="$(now)"
    pids=()
    for i in $(seq "$STREAM"); do
        ( "$CUZK" single "${SINGLE[@]}" --out "$DIR/stream-$i.bin" >"$DIR/stream-$i.log" 2>&1
          echo "$? $(now)" >"$DIR/stream-$i.end" ) &
        pids+=($!)
    done
    if [ "${#LOAD_KINDS[@]}" -gt 0 ]; then
        while ! compgen -G "$DIR/stream-*.end" >/dev/null; do sleep 0.5; done
        prove_under_load
    fi
    wait "${pids[@]}"
    t1="$(now)"
    src=0
    made=()
    for i in $(seq "$STREAM"); do
        read -r r _ <"$DIR/stream-$i.end"
        if [ "$r" = 0 ]; then made+=("$i"); else echo "stream proof $i: rc $r"; tail -3 "$DIR/stream-$i.log"; src=$r; fi
    done
    # Over the proofs made only: a failed job's end is no completion.
    rate="$(cat "$DIR"/stream-*.end | awk '$1 == 0 { if (!n || $2 < a) a = $2; if ($2 > b) b = $2; n++ }
        END { if (n > 1 && b > a) printf "%.1f proofs/hour (%.1f s per proof) between the first and last of %d completions", (n - 1) * 3600 / (b - a), (b - a) / (n - 1), n; else printf "n/a" }')"
    row stream "$t0" "$t1" "$(daemon_hwm)" "$src" "GPU busy $(gpu_busy "$t0" "$t1") %; $rate"
    echo "stream: $rate"
    "$CUZK" status >"$DIR/status-stream.txt" 2>&1
    # The proofs that were made are verified even where another failed.
    for i in "${made[@]}"; do
        phase "verify-$i" "$CUZK" filecoin-verify --workload "$W" --proof "$DIR/stream-$i.bin" --param-cache "$P" || finish $?
    done
    [ "$src" = 0 ] || finish "$src"
elif [ "${#LOAD_KINDS[@]}" -gt 0 ]; then
    prove_under_load
fi
[ "$LOAD_RC" = 0 ] || finish "$LOAD_RC"
verify_under_load
finish 0
