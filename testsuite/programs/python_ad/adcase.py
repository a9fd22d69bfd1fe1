"""A test formula of the Python AD suites (see driver.py)."""


class Case:
    """`f` computes the outputs from the marked inputs; `value` and `jac`
    give the expected outputs and Jacobian (``jac(x)[k][i] = d out_k / d
    x_i``) from plain floats, derived by hand.

    kind: how the inputs reach `f` (see driver.marked_inputs):
      "list"          a list of floats marked with dgad.input,
      "derivgrind"    the same with derivgrind.inputf,
      "list_inplace"  a list marked with dgad.input_array,
      "array_d", "array_f"  an array.array marked with dgad.input_array,
      "f64", "f32", "longdouble"  a numpy array marked with dgad.input_array,
      "f32_2x2"       a 2 x 2 float32 array,
      "np32_scalars"  a list of numpy.float32 scalars marked with dgad.input,
      "np64_elements" a float64 array whose elements are marked one by one
                      with derivgrind.inputf and stored back,
      "views"         (strided view, Fortran-ordered 2 x k array).
    `f` returns a number, a list of numbers or a numpy array (flattened in C
    order). outputs: "output" (dgad.output per value), "output_array"
    (dgad.output_array on the result) or "derivgrind" (derivgrind.outputf).
    `tol`: relative tolerance of values and derivatives.
    """

    def __init__(self, name, inputs, f, value, jac, kind="list", tol=None, outputs="output"):
        self.name = name
        self.inputs = [float(v) for v in inputs]
        self.f = f
        self.value = value
        self.jac = jac
        self.kind = kind
        self.tol = tol if tol is not None else (2e-5 if "32" in kind else 1e-12)
        self.outputs = outputs
