"""The recording process of ``dgad.grad`` (``python3 -m dgad._child DIR``).

Runs under libdgad.so in record mode: reads the function and the inputs
from ``DIR/dgad-py-payload``, marks the inputs, calls the function, marks
its results as outputs and writes their values to ``DIR/dgad-py-values``
(first line: the kind of result; then one value per line in float.hex
form, exact).
"""

import os
import sys

import dgad
from dgad import _funcpickle


def _flat_results(result):
    """The function's results as a flat list of scalars, C order."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(result, np.ndarray):
        return "array", [result[i] for i in np.ndindex(result.shape)] if result.ndim else [result[()]]
    if isinstance(result, (list, tuple)):
        flat = []
        for item in result:
            flat.extend(_flat_results(item)[1])
        return "list", flat
    return "scalar", [result]


def main(directory):
    with open(os.path.join(directory, "dgad-py-payload"), "rb") as f:
        function, inputs, (kind, shape, dtype) = _funcpickle.loads(f.read())
    if kind == "ndarray":
        import numpy as np
        x = np.array(inputs, dtype=np.float64).reshape(shape)
        dgad.input_array(x)
    elif kind == "list":
        x = [dgad.input(v) for v in inputs]
    else:
        x = dgad.input(inputs[0])
    result_kind, results = _flat_results(function(x))
    for value in results:
        dgad.output(value)
    # The values are written from passive copies: formatting an active
    # float takes its bits apart, which dgad would report on stderr.
    lines = [result_kind] + [float(dgad.passive(v)).hex() for v in results]
    with open(os.path.join(directory, "dgad-py-values"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
