"""dgad.jvp in both modes, run natively: each call runs the function in a
child python3 under libdgad.so, in forward mode (mode="dot": the inputs
seeded with the direction, the results' dot values read) or recorded
(mode="tape": dg-eval --forward seeded with the direction). Both products
are checked against the analytic J·v and against each other.

    python3 jvp_checks.py LIBDGAD DG_EVAL

Prints `ok <what>` or `WRONG <what>` lines, then `END jvp_checks`.
"""

import math
import sys

import numpy as np

import dgad
from dgad import _grad

LIB, EVAL = sys.argv[1], sys.argv[2]
M = np.array([[2.0, 1.0, -1.0], [0.5, 3.0, 0.25], [-1.0, 0.5, 4.0]])


def check(condition, what):
    print(("ok " if condition else "WRONG ") + what, flush=True)


def flat(values):
    """A number or a flat sequence of numbers as a list of floats."""
    return [float(values)] if np.ndim(values) == 0 else [float(v) for v in values]


def close(a, b, tolerance):
    a, b = flat(a), flat(b)
    return len(a) == len(b) and all(abs(x - y) <= tolerance * max(abs(y), 1.0)
                                    for x, y in zip(a, b))


def both_modes(what, function, x, v, analytic, tolerance=1e-12):
    """jvp in forward mode and through the tape, each against `analytic`
    (a flat list), and against each other."""
    products = {}
    for mode in ("dot", "tape"):
        product = dgad.jvp(function, x, v, mode=mode, lib=LIB, evaluator=EVAL)
        products[mode] = product
        check(isinstance(product, list) and close(product, analytic, tolerance),
              "%s, mode=%s: J.v %r, analytic %r" % (what, mode, flat(product)[:6], flat(analytic)[:6]))
    check(close(products["dot"], products["tape"], tolerance),
          "%s: forward mode and the tape agree" % what)


def python_functions(w):
    """Pure Python and math: a polynomial, sin/exp/log, sqrt/atan2/pow."""
    a, b = w
    return [3 * a ** 3 - 2 * a * b + b * b - 5,
            math.sin(a) * math.exp(b) + math.log(a * b),
            math.sqrt(a) + math.atan2(a, b) + math.pow(a, 2.5)]


x, v = [1.5, 0.7], [0.5, -2.0]
a, b = x
da, db = v
r2 = a * a + b * b
both_modes("pure Python and math", python_functions, x, v, [
    (9 * a * a - 2 * b) * da + (2 * b - 2 * a) * db,
    (math.cos(a) * math.exp(b) + 1 / a) * da + (math.sin(a) * math.exp(b) + 1 / b) * db,
    (0.5 / math.sqrt(a) + b / r2 + 2.5 * a ** 1.5) * da - a / r2 * db,
])


def numpy_functions(x):
    """numpy float64: elementwise functions and linear algebra (M constant)."""
    y = M @ x
    return [np.sin(x) * np.exp(x) + np.log(x), y, x @ y, np.linalg.norm(y),
            np.linalg.solve(M, x)]


x0 = np.array([0.5, 1.25, 2.0])
v0 = np.array([1.0, 0.5, -0.25])
y0 = M @ x0
analytic = np.concatenate([
    ((np.cos(x0) + np.sin(x0)) * np.exp(x0) + 1 / x0) * v0,
    M @ v0,
    [x0 @ (M + M.T) @ v0],
    [y0 @ (M @ v0) / np.linalg.norm(y0)],
    np.linalg.solve(M, v0),
])
both_modes("numpy float64 sin/exp/log, M @ x, x.Mx, norm, solve", numpy_functions, x0, v0,
           [float(d) for d in analytic])


def float32_functions(x):
    """numpy float32 arithmetic, a reduction and a dot product."""
    c = x.astype(np.float32)
    r = c * c * c + 2 * c
    return [r, r.sum(), np.dot(c, c)]


c0 = np.array([0.5, -1.25, 2.0, 0.75, 1.5, -0.3, 0.9, 1.1, 0.2])
vc = np.array([1.0, 2.0, -1.0, 0.5, 0.25, -2.0, 1.5, 1.0, -0.5])
c32 = c0.astype(np.float32).astype(np.float64)
elementwise = (3 * c32 ** 2 + 2) * vc
both_modes("numpy float32 arrays", float32_functions, c0, vc,
           list(elementwise) + [elementwise.sum(), 2 * c32 @ vc], tolerance=2e-5)


def longdouble_functions(x):
    """numpy longdouble (x87) arithmetic and a sum."""
    l = x.astype(np.longdouble)
    r = l * l * l - l / 3
    return [r, r.sum()]


l0 = np.array([0.5, -1.5, 2.25, 3.0])
vl = np.array([1.0, -0.5, 2.0, 0.125])
elementwise = (3 * l0 ** 2 - 1 / 3) * vl
both_modes("numpy longdouble arrays", longdouble_functions, l0, vl,
           list(elementwise) + [elementwise.sum()])

# One scalar result: a float, in both modes and by default.
check(_grad._has_dot_mode(LIB), "the library has forward mode (DGAD_MODE=dot)")
for mode in ("dot", "tape", None):
    scalar = dgad.jvp(lambda t: math.exp(2 * t), 0.3, 1.5, mode=mode, lib=LIB, evaluator=EVAL)
    check(isinstance(scalar, float) and close(scalar, 3.0 * math.exp(0.6), 1e-12),
          "jvp of a scalar function, mode=%s: %r, analytic %r" % (mode, scalar, 3.0 * math.exp(0.6)))

# Errors, found before any child runs.
for mode in ("dot", "tape"):
    try:
        dgad.jvp(lambda w: w[0], [1.0, 2.0], [1.0], mode=mode, lib=LIB, evaluator=EVAL)
        check(False, "mode=%s: a direction of the wrong length raises DgadError" % mode)
    except dgad.DgadError as e:
        check("direction has 1 values, x has 2" in str(e),
              "mode=%s: a direction of the wrong length raises DgadError: %s" % (mode, e))
try:
    dgad.jvp(lambda w: w, 1.0, 1.0, mode="forward", lib=LIB, evaluator=EVAL)
    check(False, "an unknown mode raises ValueError")
except ValueError as e:
    check("mode" in str(e), "an unknown mode raises ValueError: %s" % e)
print("END jvp_checks")
