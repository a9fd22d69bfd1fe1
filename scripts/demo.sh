#!/usr/bin/env bash
# Differentiates the bundled example (testsuite/derivatives/readme_gradient.c,
# f0 = x0*x1 + x1*x2^2 - x0/x2 and f1 = |x|) without changing how it is
# compiled: record a tape under libdgad.so, then let dg-eval compute the
# gradient of each output (reverse mode) and print it next to the analytic one.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -q -p preload -p evaluator
mkdir -p target/demo
gcc -O3 -Iinclude -o target/demo/readme_gradient testsuite/derivatives/readme_gradient.c -lm

run=target/demo/run
rm -rf "$run"
x=(1.5 -0.75 2)
echo "== f(x) at x = (${x[*]}), recorded under libdgad.so"
DGAD_RECORD="$run" LD_PRELOAD="$PWD/target/release/libdgad.so" ./target/demo/readme_gradient "${x[@]}"

for k in 0 1; do
    if [ "$k" = 0 ]; then printf '1.0\n0.0\n' >"$run/dg-output-bars"; else printf '0.0\n1.0\n' >"$run/dg-output-bars"; fi
    ./target/release/dg-eval "$run"
    echo "== gradient of f$k (dg-eval, reverse mode)"
    paste -d' ' <(printf 'd/dx0\nd/dx1\nd/dx2\n') "$run/dg-input-bars"
done
awk -v a="${x[0]}" -v b="${x[1]}" -v c="${x[2]}" 'BEGIN {
    n = sqrt(a*a + b*b + c*c)
    printf "== analytic: grad f0 = (x1 - 1/x2, x0 + x2^2, 2 x1 x2 + x0/x2^2) = (%.17g, %.17g, %.17g)\n", b - 1/c, a + c*c, 2*b*c + a/(c*c)
    printf "==           grad f1 = x/|x| = (%.17g, %.17g, %.17g)\n", a/n, b/n, c/n
}'
