"""Forward (dot) mode from Python: dgad.set_dot / get_dot (and derivgrind's
set_dotvalue / get_dotvalue) on floats, numpy scalars and arrays of every
float type, and derivatives computed in the process against analytic ones.

    DGAD_MODE=dot LD_PRELOAD=<dgad>/target/release/libdgad.so python3 dot_checks.py
    python3 dot_checks.py          (natively: every dot value reads 0.0)

Prints `ok <what>` or `WRONG <what>` lines, then `END dot_checks`. Under
DGAD_MODE=dot every dot value must be the analytic derivative along the
seeded direction; natively the same script checks that the functions are
no-ops (values unchanged, dot values 0.0).
"""

import array
import math

import numpy as np

import derivgrind
import dgad

DOT = dgad.mode() == "dot"
print("mode %s" % dgad.mode(), flush=True)


def check(condition, what):
    print(("ok " if condition else "WRONG ") + what, flush=True)


def close(actual, expected, tolerance):
    """Elementwise relative closeness of two flat sequences of numbers; the
    expected dot values are 0 natively."""
    actual = [float(a) for a in np.ravel(actual)]
    expected = [float(e) if DOT else 0.0 for e in np.ravel(expected)]
    return len(actual) == len(expected) and all(
        abs(a - e) <= tolerance * max(abs(e), 1.0) for a, e in zip(actual, expected))


def check_dots(what, actual, expected, tolerance=1e-13):
    shown = [float(a) for a in np.ravel(actual)]
    check(close(actual, expected, tolerance),
          "%s: dot values %r, expected %r" % (what, shown[:6], [float(e) for e in np.ravel(expected)][:6]
                                               if DOT else "zeros"))


# ---------------------------------------------------------------------------
# set_dot / get_dot round trips
# ---------------------------------------------------------------------------

x = dgad.set_dot(1.25, 0.5)
check(type(x) is float and x == 1.25, "set_dot on a float returns a float with its value")
check_dots("float round trip", [dgad.get_dot(x)], [0.5], 0.0)
check(dgad.get_dot(3) == 0.0 and dgad.get_dot(True) == 0.0, "ints and bools read 0.0")
y = derivgrind.set_dotvalue(-2.0, 4.0)
check_dots("derivgrind.set_dotvalue / get_dotvalue", [derivgrind.get_dotvalue(y)], [4.0], 0.0)

for dtype, tolerance in ((np.float64, 0.0), (np.float32, 0.0), (np.longdouble, 0.0)):
    name = np.dtype(dtype).name
    s = dgad.set_dot(dtype(0.75), 3.0)
    check(type(s) is dtype and s == dtype(0.75), "set_dot on a %s scalar keeps type and value" % name)
    check_dots("%s scalar round trip" % name, [dgad.get_dot(s)], [3.0], tolerance)

    a = np.linspace(0.5, 2.0, 12, dtype=dtype).reshape(3, 4)
    before = a.copy()
    directions = np.arange(1, 13, dtype=dtype).reshape(3, 4) / 8
    check(dgad.set_dot(a, directions) is a and np.array_equal(a, before),
          "set_dot on a %s array works in place, values unchanged" % name)
    dots = dgad.get_dot(a)
    check(isinstance(dots, np.ndarray) and dots.dtype == a.dtype and dots.shape == a.shape,
          "get_dot of a %s array: an array of its shape and type" % name)
    check_dots("%s 3x4 array round trip" % name, dots, directions, tolerance)
    dgad.set_dot(a, -1.5)  # one number for every element
    check_dots("%s array, one dot value for all" % name, dgad.get_dot(a), [-1.5] * 12, tolerance)
    # A strided view and a Fortran-ordered array: elements in C order of
    # the logical array, the rest of the base untouched.
    base = np.zeros(12, dtype=dtype)
    view = base[1::3]
    dgad.set_dot(view, [1.0, 2.0, 3.0, 4.0])
    check_dots("%s strided view" % name, dgad.get_dot(base),
               [0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0], tolerance)
    fortran = np.asfortranarray(np.ones((2, 3), dtype=dtype))
    dgad.set_dot(fortran, np.arange(6))
    check_dots("%s Fortran-ordered array, C order" % name, dgad.get_dot(fortran).ravel(),
               range(6), tolerance)
    check_dots("%s Fortran-ordered element [1, 0]" % name, [dgad.get_dot(fortran[1, 0])], [3.0],
               tolerance)

# Long double dot values keep their 64-bit significand.
fine = np.longdouble(1) + np.longdouble(2) ** -60
ld = dgad.set_dot(np.array([2.0], dtype=np.longdouble), np.array([fine]))
check(dgad.get_dot(ld)[0] == (fine if DOT else 0),
      "a longdouble dot value 1 + 2^-60 reads back exactly (natively 0)")

for code in ("d", "f"):
    aa = array.array(code, [1.0, 2.0, 3.0])
    check(dgad.set_dot(aa, [0.5, 0.25, 0.125]) is aa, "set_dot on array.array(%r) in place" % code)
    dots = dgad.get_dot(aa)
    check(isinstance(dots, array.array) and dots.typecode == code,
          "get_dot of array.array(%r) is one" % code)
    check_dots("array.array(%r) round trip" % code, dots, [0.5, 0.25, 0.125], 0.0)

values = [1.0, 2.0, np.float32(3.0)]
check(dgad.set_dot(values, [1.0, -1.0, 2.0]) is values and values == [1.0, 2.0, 3.0],
      "set_dot on a list replaces its elements in place")
check_dots("list round trip", dgad.get_dot(values), [1.0, -1.0, 2.0], 0.0)

for bad, what in (((np.ones(3), [1.0, 2.0]), "too few dot values for an array"),
                  (([1.0, 2.0], [1.0, 2.0, 3.0]), "too many dot values for a list")):
    try:
        dgad.set_dot(*bad)
        check(False, "set_dot with %s raises ValueError" % what)
    except ValueError:
        check(True, "set_dot with %s raises ValueError" % what)

p = dgad.passive(x * 2.0)
check(p == 2.5, "passive keeps the value")
check_dots("passive", [dgad.get_dot(p)], [0.0], 0.0)
z = np.ones(3)
dgad.set_dot(z, 1.0)
dgad.passive_array(z)
check_dots("passive_array", dgad.get_dot(z), [0.0] * 3, 0.0)

# The recording marks are accepted and change nothing in dot mode.
marked = dgad.input(x)
check(marked == x, "input keeps the value")
check_dots("input keeps the dot value", [dgad.get_dot(marked)], [0.5], 0.0)
check(dgad.index(marked) == 0, "index reads 0")
dgad.output(marked)
dgad.output_array(np.ones(2))
check_dots("output changes no dot value", [dgad.get_dot(marked)], [0.5], 0.0)

# ---------------------------------------------------------------------------
# Derivatives computed in dot mode
# ---------------------------------------------------------------------------

# A polynomial in pure Python: p(t) = 3 t^3 - 2 t^2 + t - 5, p' = 9 t^2 - 4 t + 1.
t = dgad.set_dot(1.5, 1.0)
p = 3 * t ** 3 - 2 * t * t + t - 5
check_dots("polynomial", [dgad.get_dot(p)], [9 * 1.5 ** 2 - 4 * 1.5 + 1])

# math: f(u, w) = sin(u) exp(w) + log(u w) along (du, dw) = (0.5, -2).
u0, w0, du, dw = 0.7, 0.3, 0.5, -2.0
u, w = dgad.set_dot(u0, du), dgad.set_dot(w0, dw)
f = math.sin(u) * math.exp(w) + math.log(u * w)
expected = (math.cos(u0) * math.exp(w0) + 1 / u0) * du + (math.sin(u0) * math.exp(w0) + 1 / w0) * dw
check_dots("math sin/exp/log", [dgad.get_dot(f)], [expected])
g = math.sqrt(u) + math.atan2(u, w) + math.pow(u, 2.5)
expected = (0.5 / math.sqrt(u0) + w0 / (u0 * u0 + w0 * w0) + 2.5 * u0 ** 1.5) * du \
    - u0 / (u0 * u0 + w0 * w0) * dw
check_dots("math sqrt/atan2/pow", [dgad.get_dot(g)], [expected])

# numpy float64, elementwise: sin(a) exp(a) + log(a) along v (9 values: an
# AVX2 vector loop and a tail).
a0 = np.array([0.5, 1.25, 2.0, 0.75, 1.5, 0.3, 0.9, 1.1, 3.5])
v = np.array([1.0, -0.5, 0.25, 2.0, -1.0, 0.5, 1.5, -2.0, 0.75])
a = dgad.set_dot(a0.copy(), v)
r = np.sin(a) * np.exp(a) + np.log(a)
check_dots("numpy float64 sin*exp+log", dgad.get_dot(r),
           ((np.cos(a0) + np.sin(a0)) * np.exp(a0) + 1 / a0) * v)
check_dots("numpy float64 sqrt, tanh, power", dgad.get_dot(np.sqrt(a) + np.tanh(a) + a ** 1.5),
           (0.5 / np.sqrt(a0) + 1 / np.cosh(a0) ** 2 + 1.5 * np.sqrt(a0)) * v)

# numpy linear algebra: y = M x, q = x . (M x), n = |M x|, s = solve(M, x),
# along v; M constant (3 x 3).
M = np.array([[2.0, 1.0, -1.0], [0.5, 3.0, 0.25], [-1.0, 0.5, 4.0]])
x0 = np.array([0.5, -1.25, 2.0])
vx = np.array([1.0, 0.5, -0.25])
xs = dgad.set_dot(x0.copy(), vx)
ys = M @ xs
check_dots("numpy M @ x", dgad.get_dot(ys), M @ vx)
q = xs @ (M @ xs)
check_dots("numpy x . (M x)", [dgad.get_dot(q)], [x0 @ (M + M.T) @ vx])
n = np.linalg.norm(ys)
check_dots("numpy linalg.norm(M x)", [dgad.get_dot(n)], [(M @ x0) @ (M @ vx) / np.linalg.norm(M @ x0)])
s = np.linalg.solve(M, xs)
check_dots("numpy linalg.solve(M, x)", dgad.get_dot(s), np.linalg.solve(M, vx), 1e-12)

# float32 arrays: c^3 + 2c, summed too, along v (float32 tolerance).
c0 = np.array([0.5, -1.25, 2.0, 0.75, 1.5, -0.3, 0.9, 1.1, 0.2], dtype=np.float32)
vc = np.array([1.0, 2.0, -1.0, 0.5, 0.25, -2.0, 1.5, 1.0, -0.5], dtype=np.float32)
cs = dgad.set_dot(c0.copy(), vc)
rc = cs * cs * cs + 2 * cs
dots = dgad.get_dot(rc)
check(dots.dtype == np.float32, "get_dot of a float32 result is float32")
c64, v64 = c0.astype(np.float64), vc.astype(np.float64)
check_dots("numpy float32 c^3 + 2c", dots, (3 * c64 ** 2 + 2) * v64, 2e-5)
check_dots("numpy float32 sum(c^3 + 2c)", [dgad.get_dot(rc.sum())], [((3 * c64 ** 2 + 2) * v64).sum()],
           2e-5)
check_dots("numpy float32 dot(c, c)", [dgad.get_dot(np.dot(cs, cs))], [2 * c64 @ v64], 2e-5)

# longdouble arrays (x87): l^3 - l / 3 along v, and a scalar.
l0 = np.array([0.5, -1.5, 2.25, 3.0], dtype=np.longdouble)
vl = np.array([1.0, -0.5, 2.0, 0.125], dtype=np.longdouble)
ls = dgad.set_dot(l0.copy(), vl)
rl = ls * ls * ls - ls / 3
dots = dgad.get_dot(rl)
check(dots.dtype == np.longdouble, "get_dot of a longdouble result is longdouble")
check_dots("numpy longdouble l^3 - l/3", dots, (3 * l0 ** 2 - np.longdouble(1) / 3) * vl, 1e-15)
sl = rl.sum()
check_dots("numpy longdouble sum", [dgad.get_dot(sl)], [((3 * l0 ** 2 - np.longdouble(1) / 3) * vl).sum()],
           1e-15)

print("END dot_checks")
