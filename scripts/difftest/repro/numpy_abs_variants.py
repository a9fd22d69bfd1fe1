#!/usr/bin/env python3
"""numpy abs of float64 arrays in 12 variants (sizes 1..1000, strided,
__abs__, fabs, out=, float32): records itself under dgad and compares
d sum(|x|)/dx with sign(x).  `python3 numpy_abs_variants.py [avx2|native]`."""
import os
import subprocess
import sys
import tempfile

import numpy as np

SIZES = (1, 3, 7, 8, 16, 33, 1000)
LABELS = ["n%d" % n for n in SIZES] + ["strided", "__abs__", "fabs", "float32", "out="]


def inputs():
    xs = [np.linspace(-1.3, 1.1, n) + 0.013 for n in SIZES]
    xs.append((np.arange(24.0).reshape(4, 6) - 11.7) / 7)
    xs += [np.linspace(-1.3, 1.1, 16) + 0.013 for _ in range(2)]
    xs.append(np.linspace(-1.3, 1.1, 16).astype(np.float32))
    xs.append(np.linspace(-1.3, 1.1, 16) + 0.013)
    return xs


def client():
    import dgad
    xs = inputs()
    for x in xs:
        dgad.input_array(x)
    ys = [np.abs(x) for x in xs[:7]]
    ys.append(np.ascontiguousarray(np.abs(xs[7][:, ::2])))
    ys.append(abs(xs[8]))
    ys.append(np.fabs(xs[9]))
    ys.append(np.abs(xs[10]))
    ys.append(np.absolute(xs[11], out=np.empty(16)))
    for y in ys:
        dgad.output_array(y)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        client()
        return
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    cpuid = sys.argv[1] if len(sys.argv) > 1 else "avx2"
    with tempfile.TemporaryDirectory(dir="/tmp") as w:
        rec = os.path.join(w, "rec")
        env = dict(os.environ, DGAD_RECORD=rec, DGAD_CPUID=cpuid, PYTHONPATH=os.path.join(root, "python"),
                   LD_PRELOAD=os.environ.get("DGAD_LIB", os.path.join(root, "target/release/libdgad.so")))
        r = subprocess.run(["nice", "-n", "10", "timeout", "120", sys.executable, os.path.abspath(__file__), "--client"],
                           env=env, capture_output=True, text=True)
        m = sum(1 for _ in open(os.path.join(rec, "dg-output-indices")))
        np.savetxt(os.path.join(rec, "dg-output-bars"), np.ones((m, 1)))
        subprocess.run([os.environ.get("DGAD_EVAL", os.path.join(root, "target/release/dg-eval")), "--threads", "1", rec],
                       check=True, capture_output=True)
        g = np.loadtxt(os.path.join(rec, "dg-input-bars"))
    xs = inputs()
    exp = [np.sign(x).ravel() for x in xs]
    e2 = np.zeros((4, 6)); e2[:, ::2] = np.sign(xs[7][:, ::2]); exp[7] = e2.ravel()
    o = 0
    for lab, e in zip(LABELS, exp):
        bad = int(np.sum(np.abs(g[o:o + len(e)] - e) > 1e-12))
        print("DGAD_CPUID=%s abs %-8s %d of %d derivatives wrong" % (cpuid, lab, bad, len(e)))
        o += len(e)
    print("stderr:", r.stderr.strip()[:300] or "(empty)")


if __name__ == "__main__":
    main()
