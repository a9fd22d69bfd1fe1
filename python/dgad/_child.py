"""The child process of ``dgad.grad``, ``jacobian`` and ``jvp``
(``python3 -m dgad._child DIR``).

Reads the function, the inputs and, for forward mode, the direction from
``DIR/dgad-py-payload``, calls the function and writes the values of its
results to ``DIR/dgad-py-values`` (first line: the kind of result; then
one value per line in float.hex form, exact). It runs under libdgad.so in
one of two modes:

- record mode (no direction): marks the inputs as AD inputs and the
  results as AD outputs; ``dg-eval`` then sweeps the tape in ``DIR``;
- forward mode (``DGAD_MODE=dot``, a direction): gives the inputs the
  direction's values as dot values and writes the results' dot values to
  ``DIR/dgad-py-dots`` (one per line, float.hex): J·direction.
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


def _recorded_inputs(inputs, kind, shape):
    """The function's argument, every value marked as an AD input."""
    if kind == "ndarray":
        import numpy as np
        x = np.array(inputs, dtype=np.float64).reshape(shape)
        return dgad.input_array(x)
    if kind == "list":
        return [dgad.input(v) for v in inputs]
    return dgad.input(inputs[0])


def _seeded_inputs(inputs, kind, shape, direction):
    """The function's argument, every value given its dot value."""
    if kind == "ndarray":
        import numpy as np
        x = np.array(inputs, dtype=np.float64).reshape(shape)
        return dgad.set_dot(x, direction)
    if kind == "list":
        return dgad.set_dot(list(inputs), direction)
    return dgad.set_dot(inputs[0], direction[0])


def _write_hex(path, lines, values):
    with open(path, "w") as f:
        f.write("\n".join(lines + [float(v).hex() for v in values]) + "\n")


def main(directory):
    with open(os.path.join(directory, "dgad-py-payload"), "rb") as f:
        function, inputs, (kind, shape, dtype), direction = _funcpickle.loads(f.read())
    forward = direction is not None
    if forward and dgad.mode() != "dot":
        sys.exit("dgad: python: the forward-mode child runs in mode %r, not under "
                 "DGAD_MODE=dot" % dgad.mode())
    if forward:
        x = _seeded_inputs(inputs, kind, shape, direction)
    else:
        x = _recorded_inputs(inputs, kind, shape)
    result_kind, results = _flat_results(function(x))
    if forward:
        _write_hex(os.path.join(directory, "dgad-py-dots"), [],
                   [dgad.get_dot(value) for value in results])
    else:
        for value in results:
            dgad.output(value)
    # The values are written from passive copies: formatting an active
    # float takes its bits apart, which dgad would report on stderr.
    _write_hex(os.path.join(directory, "dgad-py-values"), [result_kind],
               [dgad.passive(value) for value in results])


if __name__ == "__main__":
    main(sys.argv[1])
