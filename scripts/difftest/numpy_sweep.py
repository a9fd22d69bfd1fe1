#!/usr/bin/env python3
"""Bulk sweep of numpy's elementwise functions in float64 and float32: one
recording (16 points per function), reverse sweep with all output weights
1 (the derivative of an elementwise function at each point), comparison with
central differences of the float64 formula computed natively (h = 1e-6;
tolerance 1e-6 for float64, 1e-4 for float32, relative to max(|ref|, 1e-3)).

    scripts/difftest/numpy_sweep.py [--cpuid native]       # ~1 min
    SWEEP_FUNCS=mod,fmod scripts/difftest/numpy_sweep.py
    SWEEP_LONGDOUBLE=1 scripts/difftest/numpy_sweep.py     # also np.longdouble (x87)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LIB = os.environ.get("DGAD_LIB", os.path.join(ROOT, "target/release/libdgad.so"))
EVAL = os.environ.get("DGAD_EVAL", os.path.join(ROOT, "target/release/dg-eval"))

F = {
    "sqrt": np.sqrt, "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": lambda x: np.arccosh(1 + x), "arctanh": np.arctanh,
    "square": np.square, "reciprocal": np.reciprocal, "negative": np.negative, "absolute": lambda x: np.absolute(x - 0.5),
    "fabs": lambda x: np.fabs(x - 0.5), "deg2rad": np.deg2rad, "power": lambda x: np.power(x, 2.3),
    "power_int": lambda x: x ** 3, "float_power": lambda x: np.float_power(x, 1.7), "hypot": lambda x: np.hypot(x, 0.7),
    "arctan2": lambda x: np.arctan2(x - 0.5, 0.7), "arctan2_2": lambda x: np.arctan2(0.7, x - 0.5),
    "logaddexp": lambda x: np.logaddexp(x, 0.3), "logaddexp2": lambda x: np.logaddexp2(x, 0.3),
    "maximum": lambda x: np.maximum(x, 0.52), "minimum": lambda x: np.minimum(x, 0.52), "fmax": lambda x: np.fmax(x, 0.52),
    "copysign": lambda x: np.copysign(x, -1.0), "ldexp": lambda x: np.ldexp(x, 3), "frexp_m": lambda x: np.frexp(x * 7)[0],
    "modf_frac": lambda x: np.modf(x * 7)[0], "fmod": lambda x: np.fmod(x, 0.3), "mod": lambda x: np.mod(x, 0.3),
    "remainder": lambda x: np.remainder(x * 7, 0.9), "true_divide": lambda x: np.true_divide(1.3, x),
    "sinc": np.sinc, "i0": np.i0, "clip": lambda x: np.clip(x, 0.3, 0.7), "where": lambda x: np.where(x > 0.5, x * x, -x),
    "polyval": lambda x: np.polyval([0.3, -1.2, 0.7, 2.0], x), "rad2deg": np.rad2deg, "sign_mul": lambda x: np.sign(x - 0.5) * x,
    "spacing_plus": lambda x: x + np.spacing(x), "nan_to_num": np.nan_to_num, "real_if_close": lambda x: np.real(x * (1 + 0j)),
    "cumprod": np.cumprod, "diff_cumsum": lambda x: np.cumsum(x)[-1] + 0 * x, "sort": np.sort, "interp": lambda x: np.interp(x, [0, 0.5, 1], [0.0, 2.0, 1.0]),
}
if os.environ.get("SWEEP_FUNCS"):  # a comma list: only these (e.g. to attribute stderr lines)
    F = {k: F[k] for k in os.environ["SWEEP_FUNCS"].split(",")}
# non-elementwise ones: the all-ones reverse sweep gives column sums; the reference does the same
POINTS = np.linspace(0.07, 0.93, 16) + 0.0031
DTYPES = (np.float64, np.float32) + ((np.longdouble,) if os.environ.get("SWEEP_LONGDOUBLE") else ())


def client(path_out):
    import dgad
    names = []
    for name, f in F.items():
        for dt in DTYPES:
            x = POINTS.astype(dt)
            dgad.input_array(x)
            try:
                with np.errstate(all="ignore"):
                    y = np.ascontiguousarray(np.asarray(f(x)))
            except TypeError:  # not defined for this dtype (e.g. interp of longdouble)
                names.append((name, np.dtype(dt).name, 0))
                continue
            if y.dtype not in (np.float32, np.float64):
                y = y.astype(np.float64)
            dgad.output_array(y)
            names.append((name, np.dtype(dt).name, int(y.size)))
    json.dump(names, open(path_out, "w"))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        client(sys.argv[2])
        return
    cpuid = sys.argv[sys.argv.index("--cpuid") + 1] if "--cpuid" in sys.argv else "avx2"
    work = tempfile.mkdtemp(prefix="dgad-npsweep-", dir="/tmp")
    try:
        rec = os.path.join(work, "rec")
        env = dict(os.environ, DGAD_RECORD=rec, LD_PRELOAD=LIB, DGAD_CPUID=cpuid, PYTHONPATH=os.path.join(ROOT, "python"))
        r = subprocess.run(["nice", "-n", "10", "timeout", "300", sys.executable, os.path.abspath(__file__), "--client",
                            os.path.join(work, "names.json")], env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit("recording failed: " + r.stderr[-800:])
        names = json.load(open(os.path.join(work, "names.json")))
        m = sum(1 for _ in open(os.path.join(rec, "dg-output-indices")))
        np.savetxt(os.path.join(rec, "dg-output-bars"), np.ones((m, 1)))
        subprocess.run([EVAL, "--threads", "1", rec], check=True, capture_output=True)
        g = np.loadtxt(os.path.join(rec, "dg-input-bars"))
        o, bad = 0, 0
        h = 1e-6
        for name, dt, _ in names:
            f = F[name]
            got = g[o:o + 16]
            o += 16
            if _ == 0:
                continue
            ref = np.array([(np.sum(f(POINTS + h * e)) - np.sum(f(POINTS - h * e))) / (2 * h) for e in np.eye(16)])
            tol = 1e-4 if dt == "float32" else 1e-6
            err = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-3)
            if np.max(err) > tol:
                bad += 1
                k = int(np.argmax(err))
                print("WRONG %-14s %-8s %2d of 16 points, worst x=%.4f got %.10g expected %.10g"
                      % (name, dt, int(np.sum(err > tol)), POINTS[k], got[k], ref[k]))
        print("numpy sweep (DGAD_CPUID=%s): %d of %d function/dtype pairs wrong; stderr: %s"
              % (cpuid, bad, len(names), " | ".join(r.stderr.strip().splitlines())[:600] or "(empty)"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
