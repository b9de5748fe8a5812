#!/usr/bin/env bash
# Several device runs in sequence, outliving the device tool's 10-minute
# calls while the machine stays warm (30 s after a call): `start` runs the
# stages in their own process session, `wait` follows them.
#
#   build/h200/chain.sh start 'NAME=ENV ...' ['NAME=ENV ...' ...]
#   build/h200/chain.sh wait SECS      (again in the next call until it
#                                       prints "CHAIN DONE")
#
# A stage NAME=ENV runs build/h200/fil-e2e.sh with the environment ENV
# (space-separated VAR=value words) and DIR=/tmp/chain/NAME; NAME=!COMMAND
# runs COMMAND with bash in the checkout instead (a test binary, a clean-up
# between stages). Stages run one after another whatever their status; each
# one's start, end and exit status go to the log. E.g. the 16 GiB PoRep
# stream on a param cache that the next stage reuses, then SnapDeals:
#
#   chain.sh start 'p16=KIND=porep SIZE=32GiB BUDGET=116GiB VRAM_LIMIT=16GiB
#     SINGLE=0 STREAM=6 PARAMS=/tmp/p32 CUZK=/tmp/cuzk' 'rm=!rm -rf /tmp/p32'
#     'snap=KIND=snap SIZE=32GiB BUDGET=116GiB STREAM=2 CUZK=/tmp/cuzk'
#
# Each stage runs under a time limit, CHAIN_STAGE_SECS (default 1500) or
# its own where it is named NAME~SECS: one that hangs (a test binary whose
# panic left a thread waiting) gets TERM, KILL 30 s later, and the next
# stage starts, instead of spending the rest of the device session.
#
# `wait` prints the log since the last call, and with $OUT set copies each
# finished stage's summary.txt and logs (no params, workloads or proofs)
# there as NAME-summary.txt and NAME-logs.tgz.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
C=/tmp/chain

# NAME of a stage NAME[~SECS]=..., and its time limit.
stage_name() { local n="${1%%=*}"; echo "${n%%~*}"; }
stage_secs() {
    local n="${1%%=*}"
    if [ "$n" != "${n#*~}" ]; then echo "${n#*~}"; else echo "${CHAIN_STAGE_SECS:-1500}"; fi
}

run_stage() {
    local name secs spec="${1#*=}"
    name="$(stage_name "$1")"
    secs="$(stage_secs "$1")"
    if [ "${spec:0:1}" = "!" ]; then
        (cd "$ROOT" && timeout -k 30 "$secs" bash -c "${spec:1}")
    else
        # shellcheck disable=SC2086
        timeout -k 30 "$secs" env $spec DIR="$C/$name" bash "$HERE/fil-e2e.sh"
    fi
}

case "${1:-}" in
    start)
        shift
        [ $# -gt 0 ] || { echo "chain.sh start: no stages" >&2; exit 2; }
        mkdir -p "$C"
        rm -f "$C/done" "$C/log.seen"
        setsid nohup bash "$0" run "$@" >>"$C/log" 2>&1 </dev/null &
        echo "chain started: $# stages, log $C/log"
        ;;
    run)
        shift
        for stage in "$@"; do
            name="$(stage_name "$stage")"
            echo "=== STAGE $name start $(date -u +%T)"
            run_stage "$stage"
            rc=$?
            late=""
            [ "$rc" = 124 ] || [ "$rc" = 137 ] && late=" (stopped at its limit, $(stage_secs "$stage") s)"
            echo "=== STAGE $name rc=$rc$late end $(date -u +%T)"
            [ -f "$C/$name/summary.txt" ] && cat "$C/$name/summary.txt"
        done
        echo "CHAIN DONE $(date -u +%T)"
        touch "$C/done"
        ;;
    wait)
        end=$(( $(date +%s) + ${2:-530} ))
        seen=$(cat "$C/log.seen" 2>/dev/null || echo 0)
        while :; do
            size=$(stat -c %s "$C/log" 2>/dev/null || echo 0)
            if [ "$size" -gt "$seen" ]; then
                # Progress bars redraw with \r: keep the last state of each line.
                tail -c +"$((seen + 1))" "$C/log" | head -c "$((size - seen))" | tr '\r' '\n' | grep -v '^\s*$' | cut -c1-300
                seen=$size
                echo "$seen" >"$C/log.seen"
            fi
            [ -f "$C/done" ] && break
            if [ "$(date +%s)" -ge "$end" ]; then
                echo "chain still running ($(date -u +%T)); call wait again"
                free -g | head -2; df -h /tmp | tail -1
                break
            fi
            sleep 5
        done
        if [ -n "${OUT:-}" ]; then
            for d in "$C"/*/; do
                n="$(basename "$d")"
                [ -f "$d/summary.txt" ] || continue
                cp "$d/summary.txt" "$OUT/$n-summary.txt"
                (cd "$d" && tar czf "$OUT/$n-logs.tgz" --exclude=params --exclude=workload --exclude='load-*' \
                    --exclude=proof.bin --exclude='*.pce' -- * 2>/dev/null)
            done
        fi
        [ -f "$C/done" ] || exit 3
        ;;
    *)
        echo "usage: $0 start 'NAME=ENV ...' ... | wait [SECS]" >&2
        exit 2
        ;;
esac
