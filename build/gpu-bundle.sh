#!/usr/bin/env bash
# Builds the GPU test and bench binaries (release, all CUDA targets) and puts
# them with build/gpu-run.sh into a bundle folder for the GPU machine, which
# has a driver but no Rust toolchain.
#
#   build/gpu-bundle.sh [DEST]      (default: <repo>/.gpu-bundle)
#
# The whole bundle is over the device tool's 64 MiB carry limit: carry a
# tar.gz of the parts a run needs, e.g.
#   tar czf .gpu-pack/b.tgz --exclude=benches .gpu-bundle   (carry [".gpu-pack"])
#   then there: tar xzf .gpu-pack/b.tgz -C /tmp/b && bash /tmp/b/.gpu-bundle/run.sh
# The device tool sends the main checkout, so from a worktree bundle into it:
#   build/gpu-bundle.sh /work/main/.gpu-bundle
# and run there with carry [".gpu-bundle"]:  bash .gpu-bundle/run.sh
# (add /.gpu-bundle/ to .git/info/exclude of that checkout).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/.gpu-bundle}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export CUZK_REQUIRE_CUDA=1

"$ROOT/build/install-nvcc.sh" >/dev/null

cd "$ROOT"
json="$(mktemp)"
cargo build --release -p cuzk-sys --tests --benches --message-format=json-render-diagnostics >"$json"
# CUZK_BUNDLE_SYS_ONLY=1: only cuzk-sys's tests and benches (NTT/H/MSM work).
if [ -z "${CUZK_BUNDLE_SYS_ONLY:-}" ]; then
    cargo build --release -p cuzk-tests --test gpu_vs_cpu --test gpu_msm --test gpu_prover --test gpu_partition --test gpu_spmv --test gpu_engine --test gpu_faults --message-format=json-render-diagnostics >>"$json"
    # The CLI (engine benchmark) and the daemon, with the cuda feature
    # (gRPC's C core needs cmake; without it the bundle has no bin/).
    if command -v cmake >/dev/null; then
        cargo build --release -p cuzk-bin --bins --message-format=json-render-diagnostics >>"$json"
    else
        echo "gpu-bundle: no cmake here, so no bin/ (cuzk, cuzk-daemon) in the bundle: the engine bench is skipped" >&2
    fi
fi
# CUZK_BUNDLE_FIL=1: the Filecoin tests too (through the engine and through
# the real cuzk-daemon). They find the daemon and their test data by the
# absolute paths of this build; run.sh recreates those paths there.
if [ -n "${CUZK_BUNDLE_FIL:-}" ]; then
    cargo build --release -p cuzk-tests --test fil_porep --message-format=json-render-diagnostics >>"$json"
    cargo build --release -p cuzk-bin --test daemon_filecoin --message-format=json-render-diagnostics >>"$json"
fi

rm -rf "$DEST"
mkdir -p "$DEST/tests" "$DEST/benches" "$DEST/bin"
python3 - "$json" "$DEST" <<'PY'
import json, shutil, sys, os
src, dest = sys.argv[1], sys.argv[2]
for line in open(src):
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    t = m["target"]
    if m["profile"].get("test") and t["kind"] == ["lib"]:
        continue  # unit tests run on any machine
    if t["kind"] == ["bin"]:
        kind = "bin"
    else:
        kind = "benches" if "bench" in t["kind"] else "tests"
    shutil.copy(m["executable"], os.path.join(dest, kind, t["name"]))
    if t["kind"] == ["bin"] and t["name"] == "cuzk-daemon":
        open(os.path.join(dest, "DAEMON_PATH"), "w").write(m["executable"])
PY
echo "$ROOT" >"$DEST/ROOT"
rm -f "$json"
strip --strip-debug "$DEST"/tests/* "$DEST"/benches/* "$DEST"/bin/* 2>/dev/null || true
cp "$ROOT/build/gpu-run.sh" "$DEST/run.sh"
cp "$ROOT/build/gpu-run-ntt.sh" "$DEST/run-ntt.sh"
git -C "$ROOT" rev-parse --short HEAD >"$DEST/COMMIT"
du -sh "$DEST"
ls -l "$DEST"/tests "$DEST"/benches "$DEST"/bin
