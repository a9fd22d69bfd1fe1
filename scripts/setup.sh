#!/usr/bin/env bash
# Installs what building and testing dgad needs on a fresh Debian 12 machine:
# compilers for the test programs (clang, gfortran), gdb and strace (tracers
# already attached, for the takeover and launcher tests), zlib's and GMP's
# headers (bit-trick tests compress data and convert to arbitrary
# precision), musl and Go (statically linked programs
# of other runtimes) and numpy for the Python tests. Safe to
# run again; does nothing when everything is there.
set -euo pipefail

need_apt=()
command -v clang >/dev/null 2>&1 || need_apt+=(clang)
command -v gfortran >/dev/null 2>&1 || need_apt+=(gfortran)
command -v gdb >/dev/null 2>&1 || need_apt+=(gdb)
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
[[ -f /usr/include/zlib.h ]] || need_apt+=(zlib1g-dev)
[[ -f /usr/include/x86_64-linux-gnu/gmp.h || -f /usr/include/gmp.h ]] || need_apt+=(libgmp-dev)
# Statically linked programs of other runtimes than glibc's: musl, Go.
command -v musl-gcc >/dev/null 2>&1 || need_apt+=(musl-tools)
command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
if ((${#need_apt[@]})); then
    echo "setup: installing ${need_apt[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The numpy tests' expected failures (numpy's own float32 SIMD kernels) were
# established with this numpy; another version may use other kernels.
NUMPY_VERSION=2.4.6
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
    echo "setup: installing numpy $NUMPY_VERSION with pip" >&2
    python3 -m pip install -q "numpy==$NUMPY_VERSION" 2>/dev/null ||
        python3 -m pip install -q numpy 2>/dev/null || {
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq python3-numpy >/dev/null
    }
fi
