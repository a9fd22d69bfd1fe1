"""Pure-Python formulas: float arithmetic, powers, abs, min/max, the math
module, loops, recursion, lists, sum, functools.reduce. Inputs are Python
floats marked with dgad.input; every Jacobian is derived by hand."""

import functools
import math
import operator

from adcase import Case

LN2, LN10 = math.log(2.0), math.log(10.0)


def digamma(x):
    """psi(x) for x > 0: recurrence up to 10, then the asymptotic series."""
    result = 0.0
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132)))))
    return result + math.log(x) - 0.5 / x - series


def unary(name, function, derivative, x0, tol=None):
    return Case("math_" + name, [x0], lambda x: function(x[0]),
                lambda x: [function(x[0])], lambda x: [[derivative(x[0])]], tol=tol)


def fib_rec(n, a, b):
    return a if n == 0 else fib_rec(n - 1, b, a + b)


def rpow(b, n):
    return 1.0 if n == 0 else b * rpow(b, n - 1)


def newton_sqrt(a):
    y = 1.0
    for _ in range(30):
        y = 0.5 * (y + a / y)
    return y


def horner(t, coefficients):
    result = 0.0
    for c in reversed(coefficients):
        result = result * t + c
    return result


def piecewise(v):
    if v > 1.0:
        return v * v
    return 2.0 * v - 1.0


def interest(principal, rate, years):
    y = principal
    i = 0
    while i < years:
        y *= 1.0 + rate
        i += 1
    return y


def sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


CASES = [
    # --- the four operations -------------------------------------------
    Case("add", [1.5, -2.25], lambda x: x[0] + x[1],
         lambda x: [x[0] + x[1]], lambda x: [[1.0, 1.0]]),
    Case("sub", [1.5, -2.25], lambda x: x[0] - x[1],
         lambda x: [x[0] - x[1]], lambda x: [[1.0, -1.0]]),
    Case("mul", [1.5, -2.25], lambda x: x[0] * x[1],
         lambda x: [x[0] * x[1]], lambda x: [[x[1], x[0]]]),
    Case("div", [1.5, -2.25], lambda x: x[0] / x[1],
         lambda x: [x[0] / x[1]], lambda x: [[1.0 / x[1], -x[0] / x[1] ** 2]]),
    Case("constants_and_ints", [1.75],
         lambda x: [2.0 - x[0], 3.0 / x[0], x[0] * 4, 7 + x[0], -x[0], +x[0], x[0] - 1,
                    x[0] / 2],
         lambda x: [2.0 - x[0], 3.0 / x[0], x[0] * 4, 7 + x[0], -x[0], x[0], x[0] - 1,
                    x[0] / 2],
         lambda x: [[-1.0], [-3.0 / x[0] ** 2], [4.0], [1.0], [-1.0], [1.0], [1.0], [0.5]]),
    Case("augmented_assignment", [1.25, 0.5],
         lambda x: functools.reduce(lambda s, _: s * x[1] + x[0], range(3), 1.0),
         # s = ((1*b + a)*b + a)*b + a = b^3 + a b^2 + a b + a
         lambda x: [x[1] ** 3 + x[0] * x[1] ** 2 + x[0] * x[1] + x[0]],
         lambda x: [[x[1] ** 2 + x[1] + 1.0, 3 * x[1] ** 2 + 2 * x[0] * x[1] + x[0]]]),
    # --- powers --------------------------------------------------------
    Case("pow_int_exponent", [1.7],
         lambda x: [x[0] ** 2, x[0] ** 3, x[0] ** -2, x[0] ** 0],
         lambda x: [x[0] ** 2, x[0] ** 3, x[0] ** -2, 1.0],
         lambda x: [[2 * x[0]], [3 * x[0] ** 2], [-2 * x[0] ** -3], [0.0]]),
    Case("pow_float_exponent", [1.7],
         lambda x: [x[0] ** 0.5, x[0] ** 2.5, x[0] ** -1.5],
         lambda x: [x[0] ** 0.5, x[0] ** 2.5, x[0] ** -1.5],
         lambda x: [[0.5 * x[0] ** -0.5], [2.5 * x[0] ** 1.5], [-1.5 * x[0] ** -2.5]]),
    Case("pow_active_exponent", [1.3, 2.2],
         lambda x: [x[0] ** x[1], 2.0 ** x[1], pow(x[0], x[1]), math.pow(x[0], 3.0)],
         lambda x: [x[0] ** x[1], 2.0 ** x[1], x[0] ** x[1], x[0] ** 3],
         lambda x: [[x[1] * x[0] ** (x[1] - 1), x[0] ** x[1] * math.log(x[0])],
                    [0.0, 2.0 ** x[1] * LN2],
                    [x[1] * x[0] ** (x[1] - 1), x[0] ** x[1] * math.log(x[0])],
                    [3 * x[0] ** 2, 0.0]]),
    # --- abs, min, max ---------------------------------------------------
    Case("abs", [-1.25, 0.75],
         lambda x: [abs(x[0]), abs(x[1]), math.fabs(x[0]), abs(x[0] * x[1])],
         lambda x: [abs(x[0]), abs(x[1]), abs(x[0]), abs(x[0] * x[1])],
         lambda x: [[-1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [-x[1], -x[0]]]),
    Case("min_max", [0.5, -1.5, 2.5],
         lambda x: [min(x[0], x[1]), max(x[0], x[1]), min(x[0], x[1], x[2]), max(x),
                    min(x, key=abs), max(x[0] * x[2], x[1] * x[1])],
         lambda x: [x[1], x[0], x[1], x[2], x[0], x[1] * x[1]],
         lambda x: [[0, 1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 2 * x[1], 0]]),
    # --- the math module: one argument ----------------------------------
    unary("sin", math.sin, math.cos, 0.7),
    unary("cos", math.cos, lambda v: -math.sin(v), 0.7),
    unary("tan", math.tan, lambda v: 1.0 / math.cos(v) ** 2, 0.7),
    unary("asin", math.asin, lambda v: 1.0 / math.sqrt(1.0 - v * v), 0.3),
    unary("acos", math.acos, lambda v: -1.0 / math.sqrt(1.0 - v * v), 0.3),
    unary("atan", math.atan, lambda v: 1.0 / (1.0 + v * v), 0.3),
    unary("sinh", math.sinh, math.cosh, 0.8),
    unary("cosh", math.cosh, math.sinh, 0.8),
    unary("tanh", math.tanh, lambda v: 1.0 - math.tanh(v) ** 2, 0.8),
    unary("asinh", math.asinh, lambda v: 1.0 / math.sqrt(v * v + 1.0), 0.8),
    unary("acosh", math.acosh, lambda v: 1.0 / math.sqrt(v * v - 1.0), 1.8),
    unary("atanh", math.atanh, lambda v: 1.0 / (1.0 - v * v), 0.4),
    unary("exp", math.exp, math.exp, 1.1),
    unary("exp2", math.exp2, lambda v: 2.0 ** v * LN2, 1.1),
    unary("expm1", math.expm1, math.exp, 0.01),
    unary("log", math.log, lambda v: 1.0 / v, 2.5),
    unary("log2", math.log2, lambda v: 1.0 / (v * LN2), 2.5),
    unary("log10", math.log10, lambda v: 1.0 / (v * LN10), 2.5),
    unary("log1p", math.log1p, lambda v: 1.0 / (1.0 + v), 0.02),
    unary("sqrt", math.sqrt, lambda v: 0.5 / math.sqrt(v), 2.5),
    unary("cbrt", math.cbrt, lambda v: 1.0 / (3.0 * math.cbrt(v) ** 2), 2.5),
    unary("erf", math.erf, lambda v: 2.0 / math.sqrt(math.pi) * math.exp(-v * v), 0.6),
    unary("erfc", math.erfc, lambda v: -2.0 / math.sqrt(math.pi) * math.exp(-v * v), 0.6),
    unary("degrees", math.degrees, lambda v: 180.0 / math.pi, 0.6),
    unary("radians", math.radians, lambda v: math.pi / 180.0, 0.6),
    # CPython's own code (Lanczos approximation), not libm's:
    # differentiated as machine code.
    unary("gamma", math.gamma, lambda v: math.gamma(v) * digamma(v), 2.3, tol=1e-9),
    unary("lgamma", math.lgamma, digamma, 2.3, tol=1e-9),
    Case("math_log_base", [5.5, 3.0], lambda x: math.log(x[0], x[1]),
         lambda x: [math.log(x[0]) / math.log(x[1])],
         lambda x: [[1.0 / (x[0] * math.log(x[1])),
                     -math.log(x[0]) / (x[1] * math.log(x[1]) ** 2)]]),
    # --- the math module: several arguments -----------------------------
    Case("math_atan2", [0.8, -1.4], lambda x: math.atan2(x[0], x[1]),
         lambda x: [math.atan2(x[0], x[1])],
         lambda x: [[x[1] / (x[0] ** 2 + x[1] ** 2), -x[0] / (x[0] ** 2 + x[1] ** 2)]]),
    Case("math_hypot2", [0.8, -1.4], lambda x: math.hypot(x[0], x[1]),
         lambda x: [math.sqrt(x[0] ** 2 + x[1] ** 2)],
         lambda x: [[x[0] / math.hypot(*x), x[1] / math.hypot(*x)]]),
    # Three arguments: CPython's own vector_norm, not libm's hypot.
    Case("math_hypot3", [0.8, -1.4, 2.0], lambda x: math.hypot(x[0], x[1], x[2]),
         lambda x: [math.sqrt(x[0] ** 2 + x[1] ** 2 + x[2] ** 2)],
         lambda x: [[v / math.sqrt(x[0] ** 2 + x[1] ** 2 + x[2] ** 2) for v in x]]),
    Case("math_dist", [0.8, -1.4, 2.0, 0.5], lambda x: math.dist(x[:2], x[2:]),
         lambda x: [math.sqrt((x[0] - x[2]) ** 2 + (x[1] - x[3]) ** 2)],
         lambda x: [[d / math.sqrt((x[0] - x[2]) ** 2 + (x[1] - x[3]) ** 2)
                     for d in (x[0] - x[2], x[1] - x[3], x[2] - x[0], x[3] - x[1])]]),
    Case("math_pow", [1.3, 2.2], lambda x: math.pow(x[0], x[1]),
         lambda x: [x[0] ** x[1]],
         lambda x: [[x[1] * x[0] ** (x[1] - 1), x[0] ** x[1] * math.log(x[0])]]),
    Case("math_copysign_fmod_remainder", [7.5, -2.0],
         lambda x: [math.copysign(x[0], x[1]), math.fmod(x[0], x[1]),
                    math.remainder(x[0], x[1])],
         lambda x: [-7.5, 1.5, -0.5],
         # fmod(7.5, -2) = 7.5 - 3*(-2) -> (1, 3); remainder: 7.5 - (-4)*(-2) -> (1, 4)
         lambda x: [[-1.0, 0.0], [1.0, 3.0], [1.0, 4.0]]),
    # CPython's math module binds ldexp, frexp and modf to libc.so.6's
    # copies (glibc exports them from libc and libm).
    Case("math_ldexp", [6.5], lambda x: math.ldexp(x[0], 3),
         lambda x: [52.0], lambda x: [[8.0]]),
    Case("math_frexp", [6.5], lambda x: math.frexp(x[0])[0],
         lambda x: [0.8125], lambda x: [[1.0 / 8.0]]),
    Case("math_modf", [6.5], lambda x: list(math.modf(x[0])),
         lambda x: [0.5, 6.0], lambda x: [[1.0], [0.0]]),
    Case("float_mod_floordiv", [7.5, 2.0],
         lambda x: [x[0] % x[1], x[0] // x[1], divmod(x[0], x[1])[1]],
         lambda x: [1.5, 3.0, 1.5],
         lambda x: [[1.0, -3.0], [0.0, 0.0], [1.0, -3.0]]),
    Case("math_fsum_prod", [0.1, 0.2, 0.3, 0.4],
         lambda x: [math.fsum(x), math.prod(x)],
         lambda x: [math.fsum(x), x[0] * x[1] * x[2] * x[3]],
         lambda x: [[1.0, 1.0, 1.0, 1.0],
                    [x[1] * x[2] * x[3], x[0] * x[2] * x[3], x[0] * x[1] * x[3],
                     x[0] * x[1] * x[2]]]),
    Case("sigmoid", [0.3], lambda x: sigmoid(x[0]),
         lambda x: [sigmoid(x[0])], lambda x: [[sigmoid(x[0]) * (1.0 - sigmoid(x[0]))]]),
    # --- control flow ---------------------------------------------------
    Case("loop_newton_sqrt", [2.0], lambda x: newton_sqrt(x[0]),
         lambda x: [math.sqrt(x[0])], lambda x: [[0.5 / math.sqrt(x[0])]]),
    Case("loop_horner", [0.7, 1.0, -2.0, 0.5, 3.0],
         lambda x: horner(x[0], x[1:]),
         lambda x: [x[1] + x[2] * x[0] + x[3] * x[0] ** 2 + x[4] * x[0] ** 3],
         lambda x: [[x[2] + 2 * x[3] * x[0] + 3 * x[4] * x[0] ** 2,
                     1.0, x[0], x[0] ** 2, x[0] ** 3]]),
    Case("loop_while", [100.0, 0.05], lambda x: interest(x[0], x[1], 10),
         lambda x: [x[0] * (1.0 + x[1]) ** 10],
         lambda x: [[(1.0 + x[1]) ** 10, 10 * x[0] * (1.0 + x[1]) ** 9]], tol=1e-11),
    Case("branch_taken", [1.5], lambda x: piecewise(x[0]),
         lambda x: [x[0] ** 2], lambda x: [[2 * x[0]]]),
    Case("branch_not_taken", [0.5], lambda x: piecewise(x[0]),
         lambda x: [2 * x[0] - 1], lambda x: [[2.0]]),
    Case("recursion_power", [1.1], lambda x: rpow(x[0], 7),
         lambda x: [x[0] ** 7], lambda x: [[7 * x[0] ** 6]]),
    Case("recursion_fibonacci", [0.5, 1.25], lambda x: fib_rec(10, x[0], x[1]),
         lambda x: [34 * x[0] + 55 * x[1]], lambda x: [[34.0, 55.0]]),
    # --- lists, sum, reduce ---------------------------------------------
    Case("list_comprehension", [0.5, -1.5, 2.5], lambda x: [v * v for v in x],
         lambda x: [v * v for v in x],
         lambda x: [[2 * x[0], 0, 0], [0, 2 * x[1], 0], [0, 0, 2 * x[2]]]),
    Case("list_sorted_reversed", [0.5, -1.5, 2.5],
         lambda x: sorted(x) + list(reversed(x)),
         lambda x: [-1.5, 0.5, 2.5, 2.5, -1.5, 0.5],
         lambda x: [[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0], [1, 0, 0]]),
    Case("list_zip_dot", [0.5, -1.5, 2.5, 4.0],
         lambda x: sum(a * b for a, b in zip(x[:2], x[2:])),
         lambda x: [x[0] * x[2] + x[1] * x[3]],
         lambda x: [[x[2], x[3], x[0], x[1]]]),
    Case("sum", [0.5, -1.5, 2.5],
         lambda x: [sum(x), sum(x, 0.25), sum(math.sin(v) for v in x)],
         lambda x: [sum(x), sum(x) + 0.25, sum(math.sin(v) for v in x)],
         lambda x: [[1, 1, 1], [1, 1, 1], [math.cos(v) for v in x]]),
    Case("functools_reduce", [0.5, -1.5, 2.5],
         lambda x: [functools.reduce(operator.mul, x), functools.reduce(operator.add, x, 1.0),
                    functools.reduce(lambda a, b: a * a + b, x)],
         lambda x: [x[0] * x[1] * x[2], 1.0 + sum(x), (x[0] ** 2 + x[1]) ** 2 + x[2]],
         lambda x: [[x[1] * x[2], x[0] * x[2], x[0] * x[1]],
                    [1, 1, 1],
                    [4 * x[0] * (x[0] ** 2 + x[1]), 2 * (x[0] ** 2 + x[1]), 1]]),
    Case("list_mutation", [0.5, -1.5],
         lambda x: (lambda l: (l.append(l[0] * l[1]), l.insert(0, l.pop()), l)[-1])(list(x)),
         lambda x: [x[0] * x[1], x[0], x[1]],
         lambda x: [[x[1], x[0]], [1, 0], [0, 1]]),
]
