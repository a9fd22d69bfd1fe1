#!/bin/bash
# Build and run the minimal reproducers of FINDINGS.md; each prints
# expected vs dgad's derivative. Needs the packages of ../README.md.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
LIB=${DGAD_LIB:-$ROOT/target/release/libdgad.so}
EVAL=${DGAD_EVAL:-$ROOT/target/release/dg-eval}
W=$(mktemp -d /tmp/dgad-repro.XXXXXX)
trap 'rm -rf "$W"' EXIT
OB=/usr/lib/x86_64-linux-gnu/openblas-pthread
run() { nice -n 10 timeout 120 "$@"; }

echo "== 1. OpenBLAS worker threads (cblas_dgemv 96x96): forward dy/dx_0 vs column 0 of A"
run gcc -O2 -I"$ROOT/include" -I/usr/include/x86_64-linux-gnu/openblas-pthread "$HERE/openblas_threads.c" \
    -o "$W/ob" -Wl,--disable-new-dtags -L$OB -Wl,-rpath,$OB -lopenblas
for t in default 1; do
    ( cd "$W" && rm -rf rec && if [ $t = 1 ]; then export OPENBLAS_NUM_THREADS=1; fi
      DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./ob 2> err
      { echo 1; for i in $(seq 95); do echo 0; done; } > rec/dg-input-dots
      run "$EVAL" --forward --threads 1 rec > /dev/null
      bad=$(paste rec/dg-output-dots expected-dots | awk '{d=$1-$2; if (d<0) d=-d; if (d>1e-12) n++} END {print n+0}')
      echo "OPENBLAS_NUM_THREADS=$t: $bad of 96 derivatives wrong; stderr: $(wc -l < err) lines" )
done

echo "== 2. rounding-trick rule on a polynomial's constant term (x*1e15 + C, xf*1e6f + CF): forward"
run gcc -O2 -I"$ROOT/include" "$HERE/rounding_trick_poly.c" -o "$W/rt"
( cd "$W" && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./rt 2> err
  printf '1 0\n0 1\n' > rec/dg-input-dots
  run "$EVAL" --forward --threads 1 rec > /dev/null
  echo "dgad (d/dx d/dxf) | expected"; paste -d'|' rec/dg-output-dots expected; echo "stderr: $(wc -l < err) lines" )

echo "== 3. scipy.special.j0(3.1): expected -0.30092113310105756"
if python3 -c 'import scipy' 2>/dev/null; then
  ( cd "$W" && rm -rf rec && PYTHONPATH=$ROOT/python DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run python3 "$HERE/scipy_j0.py" 2> err
    echo 1 > rec/dg-output-bars; run "$EVAL" --threads 1 rec > /dev/null
    echo "dgad: $(cat rec/dg-input-bars); stderr: $(wc -l < err) lines" )
else echo "scipy not installed"; fi

echo "== 4. complex libm (cexp, clog, cpow, ...): forward d/dx of Re/Im f(x + 0.7i) | expected"
run gcc -O2 -I"$ROOT/include" "$HERE/complex_libm.c" -o "$W/cl" -lm
( cd "$W" && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./cl 2> err
  echo 1 > rec/dg-input-dots; run "$EVAL" --forward --threads 1 rec > /dev/null
  paste rec/dg-output-dots expected | awk '{d=$1-$2; if (d<0) d=-d; s=($2<0?-$2:$2); printf "%s %-22s %-22s %s\n", (d>1e-9*(s>1?s:1))?"WRONG":"ok   ", $1, $2, substr($0, index($0,$3))}'
  echo "stderr: $(wc -l < err) lines" )

echo "== 5. SET_HIGH_WORD (exponent replaced through a general register): dy/dx expected 0.5"
run gcc -O2 -I"$ROOT/include" "$HERE/set_high_word.c" -o "$W/shw"
( cd "$W" && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./shw 2> err
  echo 1 > rec/dg-output-bars; run "$EVAL" --threads 1 rec > /dev/null
  echo "dgad: $(cat rec/dg-input-bars); stderr: $(wc -l < err) lines" )

echo "== 6. fmod inlined as x87 fprem: dy/dx expected 1 (reported on stderr)"
run gcc -O2 -fno-math-errno -ffinite-math-only -I"$ROOT/include" "$HERE/fmod_fprem.c" -o "$W/fp" -lm
( cd "$W" && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./fp 2> err
  echo 1 > rec/dg-output-bars; run "$EVAL" --threads 1 rec > /dev/null
  echo "dgad: $(cat rec/dg-input-bars); stderr: $(cat err)" )

echo "== 7. numpy abs of float64 arrays (reported wrong in the brief; right here)"
for c in avx2 native; do python3 "$HERE/numpy_abs_variants.py" $c | grep -v ' 0 of '; done
echo "(lines above: variants with wrong derivatives; none = all right)"

echo "== 8. libm functions without a wrapper (significand, scalb, nextafter, catanh, casinh, clogl, cpowl, ...)"
run gcc -O2 -I"$ROOT/include" "$HERE/unwrapped_libm.c" -o "$W/unw" -lm
( cd "$W" && ./unw 1.3 && mv expected expected.native && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./unw 1.3 2> err
  python3 -c "import numpy as np; np.savetxt('rec/dg-output-bars', np.eye(20))"
  run "$EVAL" --threads 1 rec > /dev/null
  python3 - <<'PY'
import numpy as np
d = np.diag(np.loadtxt('rec/dg-input-bars'))
for v, l in zip(d, open('expected.native')):
    ref, name = l.split(); ref = float(ref)
    tol = 1e-2 if name.endswith('f') else 1e-5
    print('%-5s %-12s dgad %-22.15g central difference %.15g' % ('WRONG' if abs(v - ref) > tol * max(abs(ref), 1e-3) else 'ok', name, v, ref))
PY
  echo "stderr:"; cat err )

echo "== 9. control: OpenMP threads (started after takeover) are differentiated"
run gcc -O2 -fopenmp -I"$ROOT/include" "$HERE/openmp_control.c" -o "$W/omp" -lm
( cd "$W" && rm -rf rec && OMP_NUM_THREADS=4 DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./omp 2> err
  for i in $(seq 64); do echo 1; done > rec/dg-input-dots; run "$EVAL" --forward --threads 1 rec > /dev/null
  paste rec/dg-output-dots expected | awk '{d=$1-$2; if(d<0)d=-d; if(d>1e-12)n++} END{print "OMP_NUM_THREADS=4: " n+0 " of " NR " wrong"}' )

echo "== 10. range of the rounding-trick rule: y = x*2^(k-2) + 1.3*2^k, dy/dx = 2^(k-2)"
run gcc -O2 -I"$ROOT/include" "$HERE/rounding_trick_scan.c" -o "$W/rs" -lm
( cd "$W" && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./rs 2> err
  printf '1 0\n0 1\n' > rec/dg-input-dots; run "$EVAL" --forward --threads 1 rec > /dev/null
  awk 'NR<=17 {k=NR+43; printf "double k=%d: %s (expected %.17g)\n", k, $1, 2^(k-2)} NR>17 {k=NR-17+17; printf "float  k=%d: %s (expected %.17g)\n", k, $2, 2^(k-2)}' rec/dg-output-dots | grep -E ': 0 '
  echo "(lines above: k with derivative 0)" )

echo "== 11. long double (x87) intermediates beyond double's exponent range: y = (x*2^k)*2^-k, dy/dx = 1"
run gcc -O2 -I"$ROOT/include" "$HERE/x87_range.c" -o "$W/xr"
( cd "$W" && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./xr > expected 2> err
  echo 1 > rec/dg-input-dots; run "$EVAL" --forward --threads 1 rec > /dev/null
  paste rec/dg-output-dots expected | awk '{d=$1-$2; if (d<0) d=-d; printf "%s dgad %-10s expected %s %s\n", (d>1e-12)?"WRONG":"ok   ", $1, $2, $3}'
  echo "stderr: $(wc -l < err) lines" )
echo "   Boost.Math Bessel (default policy: long double inside) vs promote_double<false>"
if [ -d /usr/include/boost/math ]; then
  run g++ -O2 -I"$ROOT/include" "$HERE/boost_bessel_x87.cpp" -o "$W/bb"
  ( cd "$W" && ./bb > expected && rm -rf rec && DGAD_RECORD=$W/rec LD_PRELOAD=$LIB run ./bb > /dev/null 2> err
    python3 -c "import numpy as np; np.savetxt('rec/dg-output-bars', np.eye(8))"
    run "$EVAL" --threads 1 rec > /dev/null
    python3 - <<'PY'
import numpy as np
d = np.diag(np.loadtxt('rec/dg-input-bars'))
for v, l in zip(d, open('expected')):
    ref = float(l.split()[0])
    print('%-5s dgad %-22.15g expected %s' % ('WRONG' if abs(v - ref) > 1e-9 * abs(ref) else 'ok', v, l.strip()))
PY
    echo "stderr: $(wc -l < err) lines" )
else echo "libboost-math-dev not installed"; fi
