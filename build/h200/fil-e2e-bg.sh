#!/usr/bin/env bash
# fil-e2e.sh across device calls of at most 10 minutes each: `start` runs it
# in its own process session (it outlives the call while the machine stays
# warm, 30 s after a call), `wait` follows it until it ends or SECS pass.
#
#   KIND=porep SIZE=32GiB BUDGET=110GiB build/h200/fil-e2e-bg.sh start
#   build/h200/fil-e2e-bg.sh wait 560     (again in the next call if it said "still running")
#
# `wait` prints the run's new output since the last wait, then, once the run
# has ended, its summary, copies summary.txt and a tar of the logs to $OUT
# (when set) and exits with the run's status; 3 = still running.
# DIR as for fil-e2e.sh (default /tmp/fil-e2e-$KIND-$SIZE); `start` writes it
# to /tmp/fil-e2e.dir so `wait` needs no environment.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd="${1:-}"
case "$cmd" in
    start)
        export KIND="${KIND:-porep}" SIZE="${SIZE:-2KiB}"
        export DIR="${DIR:-/tmp/fil-e2e-$KIND-$SIZE}"
        mkdir -p "$DIR"
        echo "$DIR" >/tmp/fil-e2e.dir
        rm -f "$DIR/rc" "$DIR/run.log.seen"
        setsid nohup bash "$HERE/fil-e2e.sh" >"$DIR/run.log" 2>&1 </dev/null &
        echo "fil-e2e started: pid $!, $KIND $SIZE, log $DIR/run.log"
        ;;
    wait)
        secs="${2:-560}"
        DIR="${DIR:-$(cat /tmp/fil-e2e.dir 2>/dev/null)}"
        [ -n "$DIR" ] && [ -f "$DIR/run.log" ] || { echo "no run started (no /tmp/fil-e2e.dir or run.log)"; exit 2; }
        end=$(( $(date +%s) + secs ))
        seen=$(cat "$DIR/run.log.seen" 2>/dev/null || echo 0)
        while :; do
            size=$(stat -c %s "$DIR/run.log")
            if [ "$size" -gt "$seen" ]; then
                # Progress bars redraw with \r: keep the last state of each line.
                tail -c +"$((seen + 1))" "$DIR/run.log" | head -c "$((size - seen))" | tr '\r' '\n' | grep -v '^\s*$' | cut -c1-300
                seen=$size
                echo "$seen" >"$DIR/run.log.seen"
            fi
            [ -f "$DIR/rc" ] && break
            if [ "$(date +%s)" -ge "$end" ]; then
                echo "fil-e2e still running ($(date -u +%H:%M:%S)); call wait again"
                free -g | head -2; df -h "$DIR" | tail -1
                exit 3
            fi
            sleep 5
        done
        rc=$(cat "$DIR/rc")
        if [ -n "${OUT:-}" ]; then
            cp "$DIR/summary.txt" "$OUT/" 2>/dev/null
            (cd "$DIR" && tar czf "$OUT/fil-e2e-logs.tgz" --exclude=params --exclude=workload --exclude=proof.bin -- * 2>/dev/null)
        fi
        echo "fil-e2e ended: rc $rc"
        exit "$rc"
        ;;
    *)
        echo "usage: $0 start | wait [SECS]" >&2
        exit 2
        ;;
esac
