#!/usr/bin/env bash
# Builds libdgad.so and runs the bundled example program (a 2-D stencil,
# testsuite/programs/c/stencil.c) natively and under the code cache, then
# shows that both produce the same bytes. Until record mode lands (issue #3)
# this demonstrates the execution engine (DGAD_MODE=null), not gradients.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -q -p preload
mkdir -p target/demo
gcc -O3 -o target/demo/stencil testsuite/programs/c/stencil.c -lm

echo "== native"
./target/demo/stencil 200 50 | tee target/demo/native.out
echo "== under libdgad.so (DGAD_MODE=null, DGAD_STATS=1)"
DGAD_MODE=null DGAD_STATS=1 LD_PRELOAD="$PWD/target/release/libdgad.so" \
    ./target/demo/stencil 200 50 | tee target/demo/dgad.out
if cmp -s target/demo/native.out target/demo/dgad.out; then
    echo "== identical output"
else
    echo "== OUTPUT DIFFERS" >&2
    exit 1
fi
