"""The dgad and derivgrind packages themselves: every way of marking inputs
and outputs (dgad.input on floats and numpy scalars, input_array on numpy
arrays of every layout and type, array.array and lists, derivgrind.inputf /
outputf, output_array), index, passive, disabled, the dot-value functions
and the errors. A check that fails prints `WRONG <what>`; natively every
request must be a no-op (index 0, mode "native")."""

import array
import math

import numpy as np

import derivgrind
import dgad
from adcase import Case


def check(condition, what):
    if not condition:
        print("WRONG %s (mode %s)" % (what, dgad.mode()), flush=True)


def recording():
    return dgad.mode() == "record"


def raises(function, exception=TypeError):
    try:
        function()
    except exception:
        return True
    return False


def derivgrind_names(x):
    check(derivgrind.get_dotvalue(x[0]) == 0.0, "get_dotvalue gives 0.0 without dot mode")
    y = derivgrind.set_dotvalue(x[0], 1.0)
    check(y == x[0], "set_dotvalue keeps the value")
    check(isinstance(y, float), "set_dotvalue returns a float")
    return [x[0] * x[1] + math.sin(x[0])]


def index_passive_disabled(x):
    i0 = dgad.index(x[0])
    check((i0 != 0) == recording(), "index of a marked input is non-zero exactly when recording")
    p = dgad.passive(x[0])
    check(p == x[0] and dgad.index(p) == 0, "passive copy: same value, index 0")
    y = x[0] * 3.0
    check((dgad.index(y) != 0) == recording(), "a result of an input is active when recording")
    with dgad.disabled():
        z = x[0] * x[1]
    check(dgad.index(z) == 0, "results are passive inside dgad.disabled()")
    w = x[0] * x[1]
    check((dgad.index(w) != 0) == recording(), "recording resumes after dgad.disabled()")
    check(dgad.running() == recording(), "running() agrees with mode()")
    return [y, p * x[1], z, w]


FRESH = [2.5, 1.5]


def fresh_objects(x):
    check(x[0] is not FRESH[0] and x[1] is not FRESH[1], "input returns a new object")
    check(dgad.index(FRESH[0]) == 0, "the float passed to input stays passive")
    check(dgad.index(2.5) == 0, "the constant 2.5 stays passive")
    check(type(dgad.input) is not None and isinstance(x[0], float), "input returns a float")
    return [x[0] / x[1]]


def errors(x):
    check(raises(lambda: dgad.input(1 + 2j)), "input(complex) raises TypeError")
    check(raises(lambda: dgad.input("1.0")), "input(str) raises TypeError")
    check(raises(lambda: dgad.input_array(np.arange(3))), "input_array(int array) raises")
    frozen = np.ones(3)
    frozen.flags.writeable = False
    check(raises(lambda: dgad.input_array(frozen)), "input_array(read-only array) raises")
    check(raises(lambda: dgad.output([1.0, 2.0])), "output(list) raises TypeError")
    check(raises(lambda: dgad.index(np.ones(2))), "index(array) raises TypeError")
    return [x[0] * x[0]]


def np32_scalars(x):
    check(all(isinstance(v, np.float32) for v in x), "input(np.float32) gives np.float32")
    check((dgad.index(x[0]) != 0) == recording(), "np.float32 scalar input is marked")
    return [x[0] * x[1] + x[0]]


def views(x):
    view, fortran = x
    return view * fortran.ravel()  # C order of the logical arrays


CASES = [
    Case("api_derivgrind_names", [0.5, -1.5], derivgrind_names,
         lambda x: [x[0] * x[1] + math.sin(x[0])],
         lambda x: [[x[1] + math.cos(x[0]), x[0]]], kind="derivgrind", outputs="derivgrind"),
    Case("api_index_passive_disabled", [0.5, -1.5], index_passive_disabled,
         lambda x: [3 * x[0], x[0] * x[1], x[0] * x[1], x[0] * x[1]],
         lambda x: [[3, 0], [0, x[0]], [0, 0], [x[1], x[0]]]),
    Case("api_fresh_objects", FRESH, fresh_objects, lambda x: [x[0] / x[1]],
         lambda x: [[1 / x[1], -x[0] / x[1] ** 2]]),
    Case("api_errors", [0.75], errors, lambda x: [x[0] ** 2], lambda x: [[2 * x[0]]]),
    Case("api_output_forms", [0.5, -1.5],
         lambda x: [np.float64(x[0]) * x[1], 3, np.float32(x[0]), x[1] / 2, True],
         lambda x: [x[0] * x[1], 3.0, x[0], x[1] / 2, 1.0],
         lambda x: [[x[1], x[0]], [0, 0], [1, 0], [0, 0.5], [0, 0]]),
    Case("api_output_array_2d", [0.5, -1.5, 2.0],
         lambda x: np.array([[x[0] * x[1], x[1]], [x[2] * x[2], x[0] + x[2]]]),
         lambda x: [x[0] * x[1], x[1], x[2] ** 2, x[0] + x[2]],
         lambda x: [[x[1], x[0], 0], [0, 1, 0], [0, 0, 2 * x[2]], [1, 0, 1]],
         outputs="output_array"),
    Case("api_list_inplace", [0.5, -1.5, 2.0], lambda l: l[0] * l[1] * l[2],
         lambda x: [x[0] * x[1] * x[2]],
         lambda x: [[x[1] * x[2], x[0] * x[2], x[0] * x[1]]], kind="list_inplace"),
    Case("api_array_module_d", [0.5, -1.5, 2.0], lambda a: sum(v * v for v in a),
         lambda x: [sum(v * v for v in x)], lambda x: [[2 * v for v in x]], kind="array_d"),
    Case("api_array_module_f", [0.5, -1.5, 2.0], lambda a: [a[0] * a[1], a[2]],
         lambda x: [x[0] * x[1], x[2]], lambda x: [[x[1], x[0], 0], [0, 0, 1]], kind="array_f"),
    Case("api_np32_scalars", [1.5, -0.5], np32_scalars, lambda x: [x[0] * x[1] + x[0]],
         lambda x: [[x[1] + 1, x[0]]], kind="np32_scalars"),
    Case("api_views_strided_fortran", [0.5, -1.5, 2.0, 0.25, 1.0, 3.0, -2.0, 0.5],
         views, lambda x: [x[0] * x[4], x[1] * x[5], x[2] * x[6], x[3] * x[7]],
         lambda x: [[x[4], 0, 0, 0, x[0], 0, 0, 0], [0, x[5], 0, 0, 0, x[1], 0, 0],
                    [0, 0, x[6], 0, 0, 0, x[2], 0], [0, 0, 0, x[7], 0, 0, 0, x[3]]],
         kind="views"),
    Case("api_float32_matmul", [0.5, -1.5, 2.0, 0.25], lambda a: a @ a,
         # [[a, b], [c, d]]^2 = [[a a + b c, a b + b d], [c a + d c, c b + d d]]
         lambda x: [x[0] * x[0] + x[1] * x[2], x[0] * x[1] + x[1] * x[3],
                    x[2] * x[0] + x[3] * x[2], x[2] * x[1] + x[3] * x[3]],
         lambda x: [[2 * x[0], x[2], x[1], 0], [x[1], x[0] + x[3], 0, x[1]],
                    [x[2], 0, x[0] + x[3], x[2]], [0, x[2], x[1], 2 * x[3]]],
         kind="f32_2x2", outputs="output_array"),
    Case("api_longdouble", [0.5, -1.5], lambda a: a * a * a,
         lambda x: [v ** 3 for v in x], lambda x: [[3 * x[0] ** 2, 0], [0, 3 * x[1] ** 2]],
         kind="longdouble", outputs="output_array"),
]
