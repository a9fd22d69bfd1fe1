"""numpy float32: arithmetic (AVX2 vector instructions on floats), BLAS
(sdot, sgemv), reductions, and the functions numpy computes with its own
SIMD kernels (np.exp, np.log, np.sin, np.cos, np.tanh on float32). Inputs
are float32 arrays marked in place with dgad.input_array; the expected
values and Jacobians are computed in double precision, compared with a
float32 tolerance."""

import math

import numpy as np

from adcase import Case

A = [0.5, -1.25, 2.0, 0.75, 1.5, -0.3, 0.9, 1.1, 0.2]    # 9: an AVX2 vector and a tail
B = [1.5, 0.25, -0.5, 2.0, 0.4, 1.2, -0.7, 0.6, 1.3]
POSITIVE = [0.5, 1.25, 2.0, 0.75, 1.5, 0.3, 0.9, 1.1, 3.5]


def f32(v):
    return float(np.float32(v))


def diag(values):
    n = len(values)
    return [[values[i] if i == j else 0.0 for j in range(n)] for i in range(n)]


def two_blocks(da, db):
    n = len(da)
    return [[da[i] if j == i else db[i] if j == n + i else 0.0 for j in range(2 * n)]
            for i in range(n)]


def split(x):
    n = len(x) // 2
    return x[:n], x[n:]


def elementwise(name, function, value, da, db, inputs=A + B):
    return Case("np32_" + name, inputs, lambda x: function(*split(x)),
                lambda x: [value(a, b) for a, b in zip(*split(x))],
                lambda x: two_blocks([da(a, b) for a, b in zip(*split(x))],
                                     [db(a, b) for a, b in zip(*split(x))]),
                kind="f32")


def unary(name, function, reference, derivative, inputs):
    return Case("np32_" + name, inputs, function,
                lambda x: [reference(v) for v in x],
                lambda x: diag([derivative(v) for v in x]), kind="f32")


def norm(v):
    return math.sqrt(sum(t * t for t in v))


CASES = [
    elementwise("add", lambda a, b: a + b, lambda a, b: a + b, lambda a, b: 1, lambda a, b: 1),
    elementwise("mul", lambda a, b: a * b, lambda a, b: a * b,
                lambda a, b: b, lambda a, b: a),
    elementwise("div", lambda a, b: a / b, lambda a, b: a / b,
                lambda a, b: 1 / b, lambda a, b: -a / b ** 2),
    elementwise("maximum", np.maximum, max, lambda a, b: float(a >= b), lambda a, b: float(b > a)),
    Case("np32_scalar_broadcast", A, lambda a: np.float32(3.0) * a - a / np.float32(2.0),
         lambda x: [2.5 * v for v in x], lambda x: diag([2.5] * len(x)), kind="f32"),
    Case("np32_square_abs", A, lambda a: np.concatenate([a * a, np.abs(a)]),
         lambda x: [v * v for v in x] + [abs(v) for v in x],
         lambda x: diag([2 * v for v in x]) + diag([math.copysign(1.0, v) for v in x]),
         kind="f32"),
    unary("sqrt", np.sqrt, math.sqrt, lambda v: 0.5 / math.sqrt(v), POSITIVE),
    Case("np32_sum", A + B, np.sum, lambda x: [sum(x)], lambda x: [[1.0] * len(x)], kind="f32"),
    Case("np32_dot", A[:8] + B[:8], lambda x: np.dot(x[:8], x[8:]),
         lambda x: [sum(a * b for a, b in zip(x[:8], x[8:]))],
         lambda x: [x[8:] + x[:8]], kind="f32"),
    Case("np32_matvec", A[:6] + B[:3], lambda x: x[:6].reshape(2, 3) @ x[6:],
         lambda x: [sum(x[3 * i + j] * x[6 + j] for j in range(3)) for i in range(2)],
         lambda x: [[x[6], x[7], x[8], 0, 0, 0, x[0], x[1], x[2]],
                    [0, 0, 0, x[6], x[7], x[8], x[3], x[4], x[5]]], kind="f32"),
    Case("np32_linalg_norm", A, np.linalg.norm, lambda x: [norm(x)],
         lambda x: [[v / norm(x) for v in x]], kind="f32"),
    # numpy's own SIMD kernels (loops_exponent_log, loops_trigonometric,
    # loops_hyperbolic dispatch targets X86_V3 = AVX2+FMA3):
    unary("exp", np.exp, math.exp, math.exp, A),
    unary("log", np.log, math.log, lambda v: 1 / v, POSITIVE),
    unary("sin", np.sin, math.sin, math.cos, A),
    unary("cos", np.cos, math.cos, lambda v: -math.sin(v), A),
    unary("tanh", np.tanh, math.tanh, lambda v: 1 - math.tanh(v) ** 2, A),
    # No own kernel below AVX-512: libm's atanf per element.
    unary("arctan", np.arctan, math.atan, lambda v: 1 / (1 + v * v), A),
]
