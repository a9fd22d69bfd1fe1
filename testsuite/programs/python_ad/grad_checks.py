"""dgad.grad, value_and_grad and jacobian, run natively: each records the
function in a child python3 under libdgad.so and sweeps the tape.

    python3 grad_checks.py LIBDGAD DG_EVAL

Prints `ok <what>` or `WRONG <what>` lines, then `END grad_checks`.
"""

import math
import os
import sys

import dgad

LIB, EVAL = sys.argv[1], sys.argv[2]
SCALE = 2.0


def check(condition, what):
    print(("ok " if condition else "WRONG ") + what, flush=True)


def close(a, b, tolerance=1e-12):
    return all(abs(x - y) <= tolerance * max(abs(y), 1.0) for x, y in zip(a, b)) \
        and len(a) == len(b)


def doubled(a, n):
    """Recursive: a * SCALE^n (a module global, sent by value with the
    function that calls it)."""
    return a if n == 0 else doubled(a * SCALE, n - 1)


def make_function():
    k = 3.0  # a closure cell

    return lambda x: doubled(x[0], 2) * k + math.exp(x[1]) + x[0] * x[1] ** 2


# f(x0, x1) = 12 x0 + e^x1 + x0 x1^2
x = [1.0, 2.0]
expected = [12.0 + x[1] ** 2, math.exp(x[1]) + 2 * x[0] * x[1]]
gradient = dgad.grad(make_function(), x, lib=LIB, evaluator=EVAL)
check(isinstance(gradient, list) and close(gradient, expected),
      "grad of a closure calling a recursive global function: %r, analytic %r"
      % (gradient, expected))

jacobian = dgad.jacobian(lambda v: [v[0] * v[1], math.hypot(v[0], v[1]), 7.0], (3.0, 4.0),
                         lib=LIB, evaluator=EVAL)
analytic = [[4.0, 3.0], [0.6, 0.8], [0.0, 0.0]]
check(len(jacobian) == 3 and all(close(r, a) for r, a in zip(jacobian, analytic)),
      "jacobian of three results (one passive): %r, analytic %r" % (jacobian, analytic))

# J·v by the forward sweep: f(x0, x1) = (x0 x1, sin x0 + x1^3), v = (0.5, -2).
x, v = [1.5, 0.7], [0.5, -2.0]
product = dgad.jvp(lambda w: [w[0] * w[1], math.sin(w[0]) + w[1] ** 3], x, v,
                   lib=LIB, evaluator=EVAL)
analytic = [x[1] * v[0] + x[0] * v[1], math.cos(x[0]) * v[0] + 3 * x[1] ** 2 * v[1]]
check(isinstance(product, list) and close(product, analytic),
      "jvp of two results: %r, analytic %r" % (product, analytic))
scalar = dgad.jvp(lambda t: math.exp(2 * t), 0.3, 1.5, lib=LIB, evaluator=EVAL)
check(isinstance(scalar, float) and close([scalar], [3.0 * math.exp(0.6)]),
      "jvp of a scalar function: %r, analytic %r" % (scalar, 3.0 * math.exp(0.6)))
try:
    dgad.jvp(lambda w: w[0], [1.0, 2.0], [1.0], lib=LIB, evaluator=EVAL)
    check(False, "jvp with a direction of the wrong length raises DgadError")
except dgad.DgadError as e:
    check("direction" in str(e), "jvp with a direction of the wrong length raises DgadError: %s" % e)

# Errors: missing tools (found through the environment), a function that
# raises in the recording process, a function with several results.
os.environ["DGAD_LIB"] = "/nonexistent/libdgad.so"
try:
    dgad.grad(lambda v: v[0], [1.0])
    check(False, "grad with DGAD_LIB pointing nowhere raises DgadError")
except dgad.DgadError as e:
    check("DGAD_LIB" in str(e), "grad with DGAD_LIB pointing nowhere raises DgadError: %s" % e)
os.environ["DGAD_LIB"] = LIB
os.environ["DGAD_EVAL"] = "/nonexistent/dg-eval"
# grad sweeps in the recording process (DGAD_GRAD) and needs no dg-eval; a
# tape swept by dg-eval (jvp's tape mode) does.
g = dgad.grad(lambda v: v[0] * v[1], [2.0, 3.0], lib=LIB)
check(g == [3.0, 2.0], "grad without dg-eval: %s, analytic [3.0, 2.0]" % g)
try:
    dgad.jvp(lambda v: v[0], [1.0], [1.0], mode="tape", lib=LIB)
    check(False, "jvp's tape mode with DGAD_EVAL pointing nowhere raises DgadError")
except dgad.DgadError as e:
    check("DGAD_EVAL" in str(e),
          "jvp's tape mode with DGAD_EVAL pointing nowhere raises DgadError: %s" % e)
del os.environ["DGAD_LIB"], os.environ["DGAD_EVAL"]


def failing(v):
    raise ValueError("no derivative today")


try:
    dgad.grad(failing, [1.0], lib=LIB, evaluator=EVAL)
    check(False, "a function that raises gives DgadError")
except dgad.DgadError as e:
    check("no derivative today" in str(e) and "ValueError" in str(e),
          "a function that raises gives DgadError with its traceback")
print("END grad_checks")
