#!/usr/bin/env bash
# Builds the release binaries and installs them where the existing cuzk
# daemon is installed: PREFIX/bin/cuzk (run without a subcommand it is the
# daemon: `cuzk --config /data/zk/cuzk.toml`, as its systemd unit runs it)
# and PREFIX/bin/cuzk-daemon, with PREFIX/bin/cuzk-bench a link to cuzk (so
# named it takes the existing cuzk-bench's command lines); the example config
# and systemd unit go to PREFIX/share/cuzk/. It never writes a config: an
# existing /data/zk/cuzk.toml is kept as it is.
#
#   build/install.sh [--prefix DIR] [--no-build]
#
# --prefix: default $PREFIX, else /usr/local. --no-build: install what the
# last release build left in the target directory ($CARGO_TARGET_DIR or
# ./target); where it has no cuzk-daemon (build/demo.sh builds cuzk alone)
# or an older one, cuzk-daemon is a link to cuzk, the same daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${PREFIX:-/usr/local}"
build=1
config=/data/zk/cuzk.toml
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --no-build) build=0; shift ;;
        # The comment block above, without its marks.
        -h|--help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0 ;;
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
[ -x "$target/cuzk" ] || { echo "install.sh: $target/cuzk is missing (build first, or drop --no-build)" >&2; exit 1; }
install -d "$prefix/bin" "$prefix/share/cuzk"
# Remove first: a link left by an earlier install must not be written through.
rm -f "$prefix/bin/cuzk" "$prefix/bin/cuzk-daemon" "$prefix/bin/cuzk-bench"
install -m 0755 "$target/cuzk" "$prefix/bin/"
# cuzk without a subcommand takes cuzk-daemon's flags (-c, -l, --log-level):
# a link to it serves where the separate binary was not built with it.
if [ -x "$target/cuzk-daemon" ] && ! [ "$target/cuzk-daemon" -ot "$target/cuzk" ]; then
    install -m 0755 "$target/cuzk-daemon" "$prefix/bin/"
    daemon="$prefix/bin/cuzk-daemon"
else
    ln -s cuzk "$prefix/bin/cuzk-daemon"
    daemon="$prefix/bin/cuzk-daemon (-> cuzk: $target/cuzk-daemon is missing or older than cuzk)"
fi
ln -s cuzk "$prefix/bin/cuzk-bench"
install -m 0644 configs/cuzk.example.toml configs/cuzk.service "$prefix/share/cuzk/"
echo "installed $prefix/bin/cuzk, $daemon, $prefix/bin/cuzk-bench (-> cuzk), $prefix/share/cuzk/{cuzk.example.toml,cuzk.service}"
if [ -e "$config" ]; then
    echo "config: $config kept as it is (install.sh never writes a config; the example is $prefix/share/cuzk/cuzk.example.toml)"
else
    echo "config: none at $config, where the daemon would run on the built-in defaults (a unix socket, unix:///run/curio/cuzk.sock)."
    echo "  For Curio's documented Address = \"127.0.0.1:9820\": install -D -m 0644 $prefix/share/cuzk/cuzk.example.toml $config"
fi
echo "next: the unit to /etc/systemd/system/ (cp $prefix/share/cuzk/cuzk.service /etc/systemd/system/ && systemctl daemon-reload)"
