"""numpy float64: elementwise arithmetic and functions, reductions, BLAS
(np.dot, @), np.linalg.norm. Inputs are float64 arrays marked in place with
dgad.input_array; every Jacobian is derived by hand."""

import math

import numpy as np

from adcase import Case

A = [0.5, -1.25, 2.0, 0.75, 1.5, -0.3, 0.9, 1.1]   # 8 values: a full AVX2 vector twice
B = [1.5, 0.25, -0.5, 2.0, 0.4, 1.2, -0.7, 0.6]


def diag(values):
    n = len(values)
    return [[values[i] if i == j else 0.0 for j in range(n)] for i in range(n)]


def two_blocks(da, db):
    """Jacobian of an elementwise f(a, b), inputs a then b."""
    n = len(da)
    return [[da[i] if j == i else db[i] if j == n + i else 0.0 for j in range(2 * n)]
            for i in range(n)]


def split(x):
    n = len(x) // 2
    return x[:n], x[n:]


def elementwise(name, function, value, da, db, inputs=A + B, tol=None):
    """A case for an elementwise function of two arrays (the inputs' two
    halves)."""
    return Case("np64_" + name, inputs, lambda x: function(*split(x)),
                lambda x: [value(a, b) for a, b in zip(*split(x))],
                lambda x: two_blocks([da(a, b) for a, b in zip(*split(x))],
                                     [db(a, b) for a, b in zip(*split(x))]),
                kind="f64", tol=tol)


def unary(name, function, reference, derivative, inputs, tol=None):
    return Case("np64_" + name, inputs, function,
                lambda x: [reference(v) for v in x],
                lambda x: diag([derivative(v) for v in x]), kind="f64", tol=tol)


POSITIVE = [0.5, 1.25, 2.0, 0.75, 1.5, 0.3, 0.9, 1.1, 3.5]   # 9: vector loop and tail
MATRIX = [[1.0, 2.0, -1.0], [0.5, -0.25, 3.0]]


def matvec_jacobian(x):
    # y = M v with M (2x3, inputs 0..5, row-major) and v (inputs 6..8).
    m, v = x[:6], x[6:]
    rows = []
    for i in range(2):
        row = [0.0] * 9
        for j in range(3):
            row[3 * i + j] = v[j]
            row[6 + j] = m[3 * i + j]
        rows.append(row)
    return rows


def matmat_jacobian(x):
    # C = P Q with P (2x3, inputs 0..5) and Q (3x2, inputs 6..11).
    p, q = x[:6], x[6:]
    rows = []
    for i in range(2):
        for k in range(2):
            row = [0.0] * 12
            for j in range(3):
                row[3 * i + j] = q[2 * j + k]
                row[6 + 2 * j + k] = p[3 * i + j]
            rows.append(row)
    return rows


def norm(v):
    return math.sqrt(sum(t * t for t in v))


CASES = [
    # Issue 16: abs of 16 elements equal to -1.0, marked one by one (a
    # float stored into the array as a Python float went through
    # PyFloat_AsDouble's `== -1.0` error check, after which numpy's code
    # stores the constant: derivative 0, silently).
    Case("np64_abs_of_marked_elements_regression_issue16", [-1.0] * 16 + [2.5, -0.75],
         lambda a: abs(a), lambda x: [abs(v) for v in x],
         lambda x: diag([1.0 if v > 0 else -1.0 for v in x]), kind="np64_elements"),
    # --- elementwise arithmetic ---------------------------------------
    elementwise("add", lambda a, b: a + b, lambda a, b: a + b, lambda a, b: 1, lambda a, b: 1),
    elementwise("sub", lambda a, b: a - b, lambda a, b: a - b, lambda a, b: 1, lambda a, b: -1),
    elementwise("mul", lambda a, b: a * b, lambda a, b: a * b,
                lambda a, b: b, lambda a, b: a),
    elementwise("div", lambda a, b: a / b, lambda a, b: a / b,
                lambda a, b: 1 / b, lambda a, b: -a / b ** 2),
    elementwise("maximum", np.maximum, max, lambda a, b: float(a >= b), lambda a, b: float(b > a)),
    elementwise("minimum", np.minimum, min, lambda a, b: float(a <= b), lambda a, b: float(b < a)),
    elementwise("where", lambda a, b: np.where(a > b, a * b, a - b),
                lambda a, b: a * b if a > b else a - b,
                lambda a, b: b if a > b else 1.0, lambda a, b: a if a > b else -1.0),
    elementwise("arctan2", np.arctan2, math.atan2,
                lambda a, b: b / (a * a + b * b), lambda a, b: -a / (a * a + b * b)),
    elementwise("hypot", np.hypot, math.hypot,
                lambda a, b: a / math.hypot(a, b), lambda a, b: b / math.hypot(a, b)),
    elementwise("power", np.power, lambda a, b: a ** b,
                lambda a, b: b * a ** (b - 1), lambda a, b: a ** b * math.log(a),
                inputs=POSITIVE[:8] + B),
    Case("np64_scalar_broadcast", A, lambda a: 3.0 * a - a / 2.0 + 1.0,
         lambda x: [2.5 * v + 1.0 for v in x], lambda x: diag([2.5] * len(x)), kind="f64"),
    Case("np64_square_abs_negative", A, lambda a: np.concatenate([a ** 2, np.abs(a), -a]),
         lambda x: [v * v for v in x] + [abs(v) for v in x] + [-v for v in x],
         lambda x: diag([2 * v for v in x]) + diag([math.copysign(1.0, v) for v in x])
         + diag([-1.0] * len(x)), kind="f64"),
    # --- elementwise functions ----------------------------------------
    unary("sqrt", np.sqrt, math.sqrt, lambda v: 0.5 / math.sqrt(v), POSITIVE),
    unary("sin", np.sin, math.sin, math.cos, A + [3.0]),
    unary("cos", np.cos, math.cos, lambda v: -math.sin(v), A + [3.0]),
    unary("tan", np.tan, math.tan, lambda v: 1 / math.cos(v) ** 2, A + [1.2]),
    unary("exp", np.exp, math.exp, math.exp, A + [3.0]),
    unary("log", np.log, math.log, lambda v: 1 / v, POSITIVE),
    unary("tanh", np.tanh, math.tanh, lambda v: 1 - math.tanh(v) ** 2, A + [3.0]),
    unary("arctan", np.arctan, math.atan, lambda v: 1 / (1 + v * v), A + [3.0]),
    unary("log1p_expm1", lambda a: np.log1p(a) + np.expm1(a),
          lambda v: math.log1p(v) + math.expm1(v), lambda v: 1 / (1 + v) + math.exp(v),
          POSITIVE),
    # --- reductions -----------------------------------------------------
    Case("np64_sum", POSITIVE + A, np.sum, lambda x: [math.fsum(x)],
         lambda x: [[1.0] * len(x)], kind="f64"),
    Case("np64_sum_axis", A[:6], lambda a: a.reshape(2, 3).sum(axis=0),
         lambda x: [x[0] + x[3], x[1] + x[4], x[2] + x[5]],
         lambda x: [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1]], kind="f64"),
    Case("np64_mean_prod_cumsum", A[:4],
         lambda a: np.concatenate([[np.mean(a), np.prod(a)], np.cumsum(a)]),
         lambda x: [sum(x) / 4, x[0] * x[1] * x[2] * x[3],
                    x[0], x[0] + x[1], x[0] + x[1] + x[2], sum(x)],
         lambda x: [[0.25] * 4,
                    [x[1] * x[2] * x[3], x[0] * x[2] * x[3], x[0] * x[1] * x[3],
                     x[0] * x[1] * x[2]],
                    [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], kind="f64"),
    Case("np64_max_sort", A, lambda a: np.concatenate([[np.max(a), np.min(a)], np.sort(a)]),
         lambda x: [max(x), min(x)] + sorted(x),
         lambda x: [[1.0 if i == x.index(max(x)) else 0.0 for i in range(len(x))],
                    [1.0 if i == x.index(min(x)) else 0.0 for i in range(len(x))]]
         + [[1.0 if i == x.index(v) else 0.0 for i in range(len(x))] for v in sorted(x)],
         kind="f64"),
    # --- BLAS and linalg -------------------------------------------------
    Case("np64_dot", A + B, lambda x: np.dot(x[:8], x[8:]),
         lambda x: [sum(a * b for a, b in zip(x[:8], x[8:]))],
         lambda x: [x[8:] + x[:8]], kind="f64"),
    Case("np64_matvec", [v for row in MATRIX for v in row] + [0.5, -1.5, 2.0],
         lambda x: x[:6].reshape(2, 3) @ x[6:],
         lambda x: [sum(x[3 * i + j] * x[6 + j] for j in range(3)) for i in range(2)],
         matvec_jacobian, kind="f64"),
    Case("np64_matmat", [v for row in MATRIX for v in row] + [0.5, -1.5, 2.0, 1.0, -0.5, 0.25],
         lambda x: x[:6].reshape(2, 3) @ x[6:].reshape(3, 2),
         lambda x: [sum(x[3 * i + j] * x[6 + 2 * j + k] for j in range(3))
                    for i in range(2) for k in range(2)],
         matmat_jacobian, kind="f64"),
    Case("np64_linalg_norm", A + [3.0], np.linalg.norm, lambda x: [norm(x)],
         lambda x: [[v / norm(x) for v in x]], kind="f64"),
    Case("np64_linalg_norm_matrix", A[:6], lambda a: np.linalg.norm(a.reshape(2, 3)),
         lambda x: [norm(x)], lambda x: [[v / norm(x) for v in x]], kind="f64"),
    Case("np64_linalg_solve", [4.0, 1.0, 2.0, 3.0, 1.0, 2.0],
         lambda x: np.linalg.solve(x[:4].reshape(2, 2), x[4:]),
         # [[a, b], [c, d]] y = r: y = (d r0 - b r1, a r1 - c r0) / det
         lambda x: [(x[3] * x[4] - x[1] * x[5]) / (x[0] * x[3] - x[1] * x[2]),
                    (x[0] * x[5] - x[2] * x[4]) / (x[0] * x[3] - x[1] * x[2])],
         lambda x: solve_jacobian(x), kind="f64"),
    # numpy scalars (np.float64 is a float subclass).
    Case("np64_scalars", [0.5, 2.0],
         lambda x: [x[0] * x[1], np.float64(x[0]) + 1.0, np.sin(x[1]), float(x[0]) ** 2],
         lambda x: [x[0] * x[1], x[0] + 1.0, math.sin(x[1]), x[0] ** 2],
         lambda x: [[x[1], x[0]], [1, 0], [0, math.cos(x[1])], [2 * x[0], 0]], kind="f64"),
]


def solve_jacobian(x):
    a, b, c, d, r0, r1 = x
    det = a * d - b * c
    y0 = (d * r0 - b * r1) / det
    y1 = (a * r1 - c * r0) / det
    # A y = r  =>  dy = A^-1 (dr - dA y)
    inv = [[d / det, -b / det], [-c / det, a / det]]
    rows = []
    for k in range(2):
        # d y / d A_ij = -inv[k][i] * y_j ; d y / d r_i = inv[k][i]
        rows.append([-inv[k][0] * y0, -inv[k][0] * y1, -inv[k][1] * y0, -inv[k][1] * y1,
                     inv[k][0], inv[k][1]])
    return rows
