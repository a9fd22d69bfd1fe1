#!/usr/bin/env bash
# Differentiates the bundled example (testsuite/derivatives/readme_gradient.c,
# f0 = x0*x1 + x1*x2^2 - x0/x2 and f1 = |x|) without changing how it is
# compiled: `dgad jacobian` records a tape under libdgad.so, sweeps it with
# dg-eval and prints every derivative; `dgad grad` the gradient of one output
# (reverse mode); `dgad dot` a column in forward mode, in the run, without a
# tape. The analytic values are printed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -q -p preload -p evaluator -p launcher
mkdir -p target/demo
gcc -O3 -Iinclude -o target/demo/readme_gradient testsuite/derivatives/readme_gradient.c -lm

x=(1.5 -0.75 2)
dgad=./target/release/dgad
echo "== dgad jacobian -- readme_gradient ${x[*]}"
"$dgad" jacobian -- ./target/demo/readme_gradient "${x[@]}"
echo "== dgad grad --seed 1,0 (gradient of f0, reverse mode)"
"$dgad" grad --seed 1,0 -- ./target/demo/readme_gradient "${x[@]}" | tail -n +3
echo "== dgad dot --seed 1,0,0 (d/dx0 of both outputs, forward mode in the run)"
"$dgad" dot --seed 1,0,0 -- ./target/demo/readme_gradient "${x[@]}" | tail -n +3
awk -v a="${x[0]}" -v b="${x[1]}" -v c="${x[2]}" 'BEGIN {
    n = sqrt(a*a + b*b + c*c)
    printf "== analytic: grad f0 = (x1 - 1/x2, x0 + x2^2, 2 x1 x2 + x0/x2^2) = (%.17g, %.17g, %.17g)\n", b - 1/c, a + c*c, 2*b*c + a/(c*c)
    printf "==           grad f1 = x/|x| = (%.17g, %.17g, %.17g)\n", a/n, b/n, c/n
}'
