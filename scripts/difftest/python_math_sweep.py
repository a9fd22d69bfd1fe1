#!/usr/bin/env python3
"""Sweep of CPython's math, cmath and statistics functions (one recording,
5 points each, central differences natively, tolerance 1e-5).
    scripts/difftest/python_math_sweep.py [--cpuid native]     # ~20 s
"""
import math, statistics, sys, json, cmath, fractions
F = {
 "gamma": math.gamma, "lgamma": math.lgamma, "erf": math.erf, "erfc": math.erfc, "hypot2": lambda x: math.hypot(x, 0.7),
 "hypot3": lambda x: math.hypot(x, 0.7, 1.9), "dist": lambda x: math.dist((x, 0.2, 0.5), (0.1, 1.3, -0.4)),
 "fsum": lambda x: math.fsum([x, 1e16, x * x, -1e16]), "prod": lambda x: math.prod([x, 1.5, x]),
 "fmod": lambda x: math.fmod(x * 7, 0.9), "remainder": lambda x: math.remainder(x * 7, 0.9),
 "cbrt": lambda x: math.cbrt(x), "exp2": lambda x: math.exp2(x), "log_int": lambda x: math.log(x, 3),
 "log2": math.log2, "log10": math.log10, "log1p": math.log1p, "expm1": math.expm1, "pow": lambda x: x ** 2.7,
 "ipow": lambda x: x ** 5, "atan2": lambda x: math.atan2(x, 0.4), "asinh": math.asinh, "degrees": math.degrees,
 "copysign": lambda x: math.copysign(x, -1), "ldexp": lambda x: math.ldexp(x, 3), "frexp": lambda x: math.frexp(x * 5)[0],
 "modf": lambda x: math.modf(x * 5)[0], "sqrt": math.sqrt, "isqrt_free": lambda x: abs(-x),
 "mean": lambda x: statistics.fmean([x, 2.0, x * x]), "stdev": lambda x: statistics.stdev([x, 2.0, x * x, 0.3]),
 "pvariance": lambda x: statistics.pvariance([x, 2.0, x * x, 0.3]), "median": lambda x: statistics.median([x, 2.0, 0.1]),
 "geometric_mean": lambda x: statistics.geometric_mean([x, 2.0, 0.7]), "harmonic_mean": lambda x: statistics.harmonic_mean([x, 2.0, 0.7]),
 "cmath_log_re": lambda x: cmath.log(complex(x, 0.7)).real, "cmath_sqrt_im": lambda x: cmath.sqrt(complex(x, 0.7)).imag,
 "cmath_exp_im": lambda x: cmath.exp(complex(x, 0.7)).imag, "cmath_atanh_re": lambda x: cmath.atanh(complex(x / 2, 0.3)).real,
 "complex_pow_re": lambda x: (complex(x, 0.7) ** 2.5).real, "complex_div_im": lambda x: (1 / complex(x, 0.7)).imag,
 "abs_complex": lambda x: abs(complex(x, 0.7)), "round_sum": lambda x: x + round(x, 3) * 0, "float_str": lambda x: float(str(x)),
 "sum_builtin": lambda x: sum([x, 0.1, x * 3]), "divmod_rem": lambda x: divmod(x * 7, 0.9)[1], "floordiv_rem": lambda x: (x * 7) % 0.9,
 "sumprod": lambda x: math.sumprod([x, 2.0], [x, 0.5]) if hasattr(math, "sumprod") else x * x + 1.0,
 "tan": math.tan, "atanh": lambda x: math.atanh(x / 13), "acosh": lambda x: math.acosh(x + 1),
}

P = [0.37, 1.3, 3.1, 7.7, 12.5]


def run():
    import os
    import shutil
    import subprocess
    import tempfile
    import numpy as np
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", ".."))
    cpuid = sys.argv[sys.argv.index("--cpuid") + 1] if "--cpuid" in sys.argv else "avx2"
    work = tempfile.mkdtemp(prefix="dgad-pymath-", dir="/tmp")
    try:
        rec = os.path.join(work, "rec")
        env = dict(os.environ, DGAD_RECORD=rec, DGAD_CPUID=cpuid, PYTHONPATH=os.path.join(root, "python"),
                   LD_PRELOAD=os.environ.get("DGAD_LIB", os.path.join(root, "target/release/libdgad.so")))
        r = subprocess.run(["nice", "-n", "10", "timeout", "300", sys.executable, os.path.abspath(__file__), "client"],
                           env=env, capture_output=True, text=True)
        n = sum(1 for _ in open(os.path.join(rec, "dg-output-indices")))
        np.savetxt(os.path.join(rec, "dg-output-bars"), np.ones((n, 1)))
        subprocess.run([os.environ.get("DGAD_EVAL", os.path.join(root, "target/release/dg-eval")), "--threads", "1", rec],
                       check=True, capture_output=True)
        g = np.loadtxt(os.path.join(rec, "dg-input-bars"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    k = bad = 0
    for name, f in F.items():
        for p in P:
            h = 1e-6 * max(1, p)
            ref = (f(p + h) - f(p - h)) / (2 * h)
            if abs(g[k] - ref) / max(abs(ref), 1e-3) > 1e-5:
                bad += 1
                print("WRONG %-16s x=%-5g got %-22.15g fd %.15g" % (name, p, g[k], ref))
            k += 1
    print("python math sweep (DGAD_CPUID=%s): %d of %d wrong; stderr: %s" % (cpuid, bad, k, r.stderr.strip()[:300] or "(empty)"))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        import dgad
        for name, f in F.items():
            for p in P:
                x = dgad.input(p)
                dgad.output(float(f(x)))
    else:
        run()
