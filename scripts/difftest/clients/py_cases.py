"""Python client: `python3 py_cases.py CASE INFILE` (see ../difftest.py)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dgad  # noqa: E402
from py_cases_native import CASES  # noqa: E402

name, infile = sys.argv[1], sys.argv[2]
dtype, f = CASES[name]
x = np.array([float(v) for v in open(infile).read().split()], dtype=dtype)
dgad.input_array(x)
y = np.atleast_1d(np.asarray(f(x)))
if y.dtype not in (np.float32, np.float64):
    y = y.astype(np.float64)
y = np.ascontiguousarray(y)
dgad.output_array(y)
dgad.passive_array(y)
for v in y.ravel():
    print("y", repr(float(v)))
