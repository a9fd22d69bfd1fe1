"""Runs suites of Python AD formulas (python_ad/<suite>.py, each a list CASES).

    python3 driver.py SUITE[,SUITE...] [--expect | --dot] [NAME...]

Prints `mode <dgad.mode()>`, then for every case, in order: marks the
inputs (dgad.input, dgad.input_array, derivgrind.inputf, ... by the case's
kind), computes the outputs, marks them (dgad.output, dgad.output_array or
derivgrind.outputf) and prints

    case <name> <inputs> <outputs> <tolerance>
    value <v>                          (one per output, from a passive copy)

With --expect (run natively), also the analytic values and Jacobian rows:

    expect <v>                         (one per output)
    jac <d out_k/d x_0> <d out_k/d x_1> ...   (one per output)

A case may print `WRONG <what>` from its own checks. The test
(testsuite/tests/python_ad.rs) runs this natively with --expect and under
libdgad.so in record mode, then checks values and both sweeps of the tape
(dg-eval --jacobian, reverse and forward) case by case: the Jacobian of the
whole run is block-diagonal, one block per case.

With --dot (under DGAD_MODE=dot), every case runs once per input, the
inputs seeded with that input's unit vector as dot values (by the case's
kind, as the marks are set), and the `jac` rows are the results' dot
values: the Jacobian computed in forward mode, column by column.
"""

import array
import importlib
import sys

import derivgrind
import dgad


def flatten(result):
    np = sys.modules.get("numpy")
    if np is not None and isinstance(result, np.ndarray):
        return [result[i] for i in np.ndindex(result.shape)] if result.ndim else [result[()]]
    if isinstance(result, (list, tuple)):
        flat = []
        for item in result:
            flat.extend(flatten(item))
        return flat
    return [result]


def marked_inputs(case):
    """The inputs as `case.f` receives them, marked in input order."""
    kind = case.kind
    if kind == "list":
        return [dgad.input(v) for v in case.inputs]
    if kind == "derivgrind":
        return [derivgrind.inputf(v) for v in case.inputs]
    if kind == "list_inplace":
        return dgad.input_array(list(case.inputs))
    if kind in ("array_d", "array_f"):
        return dgad.input_array(array.array(kind[-1], case.inputs))
    import numpy as np
    if kind == "np32_scalars":
        return [dgad.input(np.float32(v)) for v in case.inputs]
    if kind == "np64_elements":
        # Derivgrind's way: each element of a float64 array marked with
        # derivgrind.inputf and stored back (issue 16).
        a = np.empty(len(case.inputs))
        a[:] = case.inputs
        for i in range(len(a)):
            a[i] = derivgrind.inputf(a[i])
        return a
    if kind == "views":
        # First half: every other element of a larger array (strided);
        # second half: a 2 x k Fortran-ordered array (marked in C order).
        half = len(case.inputs) // 2
        base = np.zeros(2 * half)
        view = base[::2]
        view[:] = case.inputs[:half]
        fortran = np.asfortranarray(np.array(case.inputs[half:]).reshape(2, half // 2))
        dgad.input_array(view)
        dgad.input_array(fortran)
        return view, fortran
    dtype = {"f64": np.float64, "f32": np.float32, "f32_2x2": np.float32,
             "longdouble": np.longdouble}[kind]
    x = np.array(case.inputs, dtype=dtype)
    if kind == "f32_2x2":
        x = x.reshape(2, 2)
    dgad.input_array(x)
    return x


def seeded_inputs(case, direction):
    """The inputs as `case.f` receives them, with dot values `direction`
    (in input order): forward mode's counterpart of marked_inputs."""
    kind = case.kind
    if kind == "list":
        return [dgad.set_dot(v, d) for v, d in zip(case.inputs, direction)]
    if kind == "derivgrind":
        return [derivgrind.set_dotvalue(v, d) for v, d in zip(case.inputs, direction)]
    if kind == "list_inplace":
        return dgad.set_dot(list(case.inputs), direction)
    if kind in ("array_d", "array_f"):
        return dgad.set_dot(array.array(kind[-1], case.inputs), direction)
    import numpy as np
    if kind == "np32_scalars":
        return [dgad.set_dot(np.float32(v), d) for v, d in zip(case.inputs, direction)]
    if kind == "np64_elements":
        a = np.empty(len(case.inputs))
        a[:] = case.inputs
        for i in range(len(a)):
            a[i] = derivgrind.set_dotvalue(a[i], direction[i])
        return a
    if kind == "views":
        half = len(case.inputs) // 2
        base = np.zeros(2 * half)
        view = base[::2]
        view[:] = case.inputs[:half]
        fortran = np.asfortranarray(np.array(case.inputs[half:]).reshape(2, half // 2))
        dgad.set_dot(view, direction[:half])
        dgad.set_dot(fortran, direction[half:])  # C order of the logical array
        return view, fortran
    dtype = {"f64": np.float64, "f32": np.float32, "f32_2x2": np.float32,
             "longdouble": np.longdouble}[kind]
    x = np.array(case.inputs, dtype=dtype)
    if kind == "f32_2x2":
        x = x.reshape(2, 2)
    return dgad.set_dot(x, direction)


def forward_jacobian(case):
    """(results of the first run, Jacobian rows) in forward mode: one run
    per input, seeded with its unit vector."""
    n = len(case.inputs)
    first, columns = None, []
    for i in range(n):
        unit = [1.0 if j == i else 0.0 for j in range(n)]
        results = flatten(case.f(seeded_inputs(case, unit)))
        first = results if first is None else first
        columns.append([float(dgad.get_dot(y)) for y in results])
    return first, [list(row) for row in zip(*columns)]


def mark_outputs(case, result):
    results = flatten(result)
    if case.outputs == "output_array":
        dgad.output_array(result)
    elif case.outputs == "derivgrind":
        for y in results:
            derivgrind.outputf(y)
    else:
        for y in results:
            dgad.output(y)
    return results


def main(argv):
    cases = [case for suite in argv[0].split(",")
             for case in importlib.import_module(suite).CASES]
    expect = "--expect" in argv[1:]
    dot = "--dot" in argv[1:]
    names = [a for a in argv[1:] if not a.startswith("--")]
    print("mode %s" % dgad.mode(), flush=True)
    for case in cases:
        if names and case.name not in names:
            continue
        if dot:
            results, jacobian = forward_jacobian(case)
        else:
            results = mark_outputs(case, case.f(marked_inputs(case)))
        out = ["case %s %d %d %r" % (case.name, len(case.inputs), len(results), case.tol)]
        # Printed from passive copies: formatting an active float takes its
        # bits apart, which dgad reports on stderr.
        out.extend("value %r" % float(dgad.passive(y)) for y in results)
        if expect:
            plain = list(case.inputs)
            out.extend("expect %r" % float(v) for v in case.value(plain))
            jacobian = case.jac(plain)
        if expect or dot:
            out.extend("jac " + " ".join(repr(float(d)) for d in row) for row in jacobian)
        print("\n".join(out), flush=True)
    print("END driver")


if __name__ == "__main__":
    main(sys.argv[1:])
