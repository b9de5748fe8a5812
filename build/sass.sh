#!/usr/bin/env bash
# Static look at the machine code of one CUDA source, no GPU needed: per
# kernel registers and stack (local memory) bytes, and an opcode histogram
# of the kernels whose name matches a pattern. This is how the Fp
# multiplication's calling cost (operand stores and loads around each call)
# was seen; see docs/CUDA.md.
#
#   build/sass.sh [SOURCE] [KERNEL_PATTERN] [ARCH]
#   build/sass.sh native/msm/msm.cu 'fp_params.*point_entries' 90   (the defaults)
#
# cuobjdump and nvdisasm are not among the pinned 13.0 wheels on PyPI: they
# come from the 13.2 wheels into its own venv (build/.sass-venv); reading SASS does not
# need the versions to match.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="${1:-native/msm/msm.cu}"
PATTERN="${2:-fp_params.*point_entries}"
ARCH="${3:-90}"
VENV="$ROOT/build/.sass-venv"

"$ROOT/build/install-nvcc.sh" >/dev/null
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "nvidia-cuda-cuobjdump==13.2.*" "nvidia-cuda-nvdisasm==13.2.*"
fi
CUOBJDUMP="$(find "$VENV" -type f -name cuobjdump | head -1)"
export PATH="$(dirname "$CUOBJDUMP"):$PATH"   # cuobjdump -sass runs nvdisasm

obj="$(mktemp --suffix=.o)"
sass="$(mktemp)"
trap 'rm -f "$obj" "$sass"' EXIT
cd "$ROOT"
# --device-c as in the real build (cc's CUDA mode): separately compiled
# device functions get their own register counts, unlike a whole-program build.
build/cuda/bin/nvcc -ccbin=c++ -O3 -I native -std=c++17 --device-c -Xptxas=-O3 \
    "-gencode=arch=compute_$ARCH,code=sm_$ARCH" -c "$SRC" -o "$obj"

echo "## registers and stack per kernel ($SRC, sm_$ARCH)"
"$CUOBJDUMP" --dump-resource-usage "$obj" | awk '
    /Function/ { name = $2; sub(/:$/, "", name) }
    /REG:/ { match($0, /REG:[0-9]+/); r = substr($0, RSTART, RLENGTH);
             match($0, /STACK:[0-9]+/); s = substr($0, RSTART, RLENGTH);
             printf "%-10s %-12s %s\n", r, s, substr(name, 1, 110) }'

"$CUOBJDUMP" -sass "$obj" >"$sass"
# One histogram per matching kernel (its SASS runs to the next "Function :").
grep -oE 'Function : [^ ]+' "$sass" | awk '{print $3}' | grep -E -- "$PATTERN" | while read -r fn; do
    echo
    echo "## opcodes of ${fn:0:110}"
    awk -v fn="$fn" '
        /Function :/ { on = ($3 == fn); next }
        on && match($0, /\/\*[0-9a-f]+\*\/[ \t]+[A-Z][A-Z0-9._]*/) {
            split(substr($0, RSTART, RLENGTH), f, /[ \t]+/); n[f[2]]++ }
        END { for (o in n) printf "%7d %s\n", n[o], o }' "$sass" | sort -k1,1nr | head -20
done
