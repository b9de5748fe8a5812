#!/usr/bin/env bash
# Builds the release binaries and installs them where the existing cuzk
# daemon is installed: PREFIX/bin/cuzk (run without a subcommand it is the
# daemon: `cuzk --config /data/zk/cuzk.toml`, as its systemd unit runs it)
# and PREFIX/bin/cuzk-daemon, with PREFIX/bin/cuzk-bench a link to cuzk (so
# named it takes the existing cuzk-bench's command lines); the example config
# and systemd unit go to PREFIX/share/cuzk/.
#
#   build/install.sh [--prefix DIR] [--no-build]
#
# --prefix: default /usr/local. --no-build: install what the last release
# build left in the target directory ($CARGO_TARGET_DIR or ./target).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/usr/local
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
if [ "$build" = 1 ]; then
    if [ -f build/env.sh ]; then . build/env.sh; fi
    # cmake for grpcio-sys from build/install-py-grpc.sh; CMake 4 needs the policy floor.
    if [ -x build/.venv/bin/cmake ]; then export PATH="$PWD/build/.venv/bin:$PATH"; fi
    export CMAKE_POLICY_VERSION_MINIMUM=3.5
    cargo build --release -p cuzk-bin --bins
fi
target="${CARGO_TARGET_DIR:-$PWD/target}/release"
for bin in cuzk cuzk-daemon; do
    [ -x "$target/$bin" ] || { echo "install.sh: $target/$bin is missing (build first, or drop --no-build)" >&2; exit 1; }
done
install -d "$prefix/bin" "$prefix/share/cuzk"
install -m 0755 "$target/cuzk" "$target/cuzk-daemon" "$prefix/bin/"
ln -sf cuzk "$prefix/bin/cuzk-bench"
install -m 0644 configs/cuzk.example.toml configs/cuzk.service "$prefix/share/cuzk/"
echo "installed $prefix/bin/cuzk, $prefix/bin/cuzk-daemon, $prefix/bin/cuzk-bench (-> cuzk), $prefix/share/cuzk/{cuzk.example.toml,cuzk.service}"
echo "next: copy the example to /data/zk/cuzk.toml (or keep your existing one), then the unit to /etc/systemd/system/"
