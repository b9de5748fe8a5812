#!/usr/bin/env bash
# Installs the CUDA compiler (nvcc 13.0, from PyPI) into build/.venv and lays
# out build/cuda as a CUDA_HOME-like folder of links (bin/, include/,
# targets/x86_64-linux/lib/ where the `cc` crate looks for cudart).
# Also installs libclang-dev (for bindgen) via apt-get when missing.
# Idempotent: re-running does nothing that is already done.
#
# Afterwards: export NVCC=build/cuda/bin/nvcc (cuzk-sys/build.rs also finds
# build/cuda on its own).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/build/.venv"
LINKS="$ROOT/build/cuda"
CUDA_VERSION="13.0.*"   # every wheel pinned to the same release: mixing fails with 'Unsupported .version'
PACKAGES=(nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-crt nvidia-cuda-runtime nvidia-cuda-cccl)

# bindgen needs libclang.
# (libclang-cpp is a different library and does not count.)
if ! ls /usr/lib/llvm-*/lib/libclang.so* /usr/lib/llvm-*/lib/libclang-[0-9]*.so* >/dev/null 2>&1; then
    echo "install-nvcc: installing libclang-dev (for bindgen)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang-dev >/dev/null
fi

# Debian's python3 lacks ensurepip unless python3-venv is installed.
if [ ! -x "$VENV/bin/python" ] && ! python3 -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    echo "install-nvcc: installing python3-venv"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$VENV"
fi
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
CU="$SITE/nvidia/cu13"

want=()
for p in "${PACKAGES[@]}"; do want+=("$p==$CUDA_VERSION"); done
if [ ! -x "$CU/bin/nvcc" ] || ! "$VENV/bin/python" -m pip check >/dev/null 2>&1 \
   || [ "$("$VENV/bin/python" -m pip freeze | grep -cE '^nvidia-(cuda-nvcc|nvvm|cuda-crt|cuda-runtime|cuda-cccl)==13\.0\.')" -ne 5 ]; then
    echo "install-nvcc: installing ${want[*]} into $VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${want[@]}"
fi

# A CUDA_HOME-shaped folder of links: nvcc finds its own pieces relative to
# itself, so bin/ links to the real files' folder; cudart goes where `cc` looks.
mkdir -p "$LINKS/targets/x86_64-linux"
ln -sfn "$CU/bin" "$LINKS/bin"
ln -sfn "$CU/include" "$LINKS/include"
ln -sfn "$CU/lib" "$LINKS/lib64"
ln -sfn "$CU/lib" "$LINKS/targets/x86_64-linux/lib"
ln -sfn "$CU/include" "$LINKS/targets/x86_64-linux/include"
[ -f "$CU/lib/libcudart_static.a" ] || { echo "install-nvcc: libcudart_static.a missing in $CU/lib" >&2; exit 1; }

"$LINKS/bin/nvcc" --version | tail -n 2
echo "install-nvcc: ok; nvcc at $LINKS/bin/nvcc"
