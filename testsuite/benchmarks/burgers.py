"""2-D viscous Burgers' equation, finite differences on an n x n grid, in
pure Python on lists with math.sqrt: the Python benchmark of dgad's record
mode (the Burgers benchmark of the Derivgrind papers; burgers.cpp is the
same algorithm in C++, operation for operation, so values and gradients of
the two agree).

    python3 burgers.py [N [STEPS]] [--time]    (default 32 10)

    u_t + u u_x + v u_y = nu (u_xx + u_yy),  v_t + u v_x + v v_y = nu (v_xx + v_yy)

on [0, 2]^2: upwind differences for the advection, central ones for the
diffusion, explicit Euler steps; the boundary keeps its initial values.
AD inputs: the initial state, all of u then all of v, row by row (2 N^2
values, marked with dgad.input); AD output: the norm of the final state,
sqrt(sum u^2 + v^2). Prints the norm. Natively the marks are no-ops. With
--time, also prints `burgers: time <seconds>` on stderr: the time steps and
the norm, without start-up (scripts/bench_python.py, scripts/bench_dot.py).

Under dgad's forward mode (DGAD_MODE=dot) every initial value also gets
dot value 1 (dgad.set_dot) and the norm's dot value, its derivative along
all-ones, is printed on stderr as `burgers: dot <value>`; natively and in
record mode nothing of this happens.
"""

import math
import os
import sys
import time

try:
    import dgad
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    import dgad

NU = 0.01


def initial_state(n):
    """u and v at t = 0: 1 plus smooth bumps, as lists of rows."""
    h = 2.0 / (n - 1)
    u = [[0.0] * n for _ in range(n)]
    v = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            sx = math.sin(0.5 * math.pi * (i * h))
            sy = math.sin(0.5 * math.pi * (j * h))
            u[i][j] = 1.0 + 0.5 * sx * sy
            v[i][j] = 1.0 + 0.25 * sx * sx * sy
    return u, v


def step(u, v, n, dt, h):
    """One explicit Euler step; returns the new (u, v)."""
    c = dt / h          # advection
    d = NU * dt / (h * h)  # diffusion
    un = [row[:] for row in u]
    vn = [row[:] for row in v]
    for i in range(1, n - 1):
        um, u0, up = u[i - 1], u[i], u[i + 1]
        vm, v0, vp = v[i - 1], v[i], v[i + 1]
        unr, vnr = un[i], vn[i]
        for j in range(1, n - 1):
            uc = u0[j]
            vc = v0[j]
            unr[j] = (uc - c * uc * (uc - um[j]) - c * vc * (uc - u0[j - 1])
                      + d * (up[j] - 2.0 * uc + um[j]) + d * (u0[j + 1] - 2.0 * uc + u0[j - 1]))
            vnr[j] = (vc - c * uc * (vc - vm[j]) - c * vc * (vc - v0[j - 1])
                      + d * (vp[j] - 2.0 * vc + vm[j]) + d * (v0[j + 1] - 2.0 * vc + v0[j - 1]))
    return un, vn


def norm(u, v):
    s = 0.0
    for row in u:
        for x in row:
            s += x * x
    for row in v:
        for x in row:
            s += x * x
    return math.sqrt(s)


def main(argv):
    timed = "--time" in argv
    argv = [a for a in argv if a != "--time"]
    n = int(argv[0]) if len(argv) > 0 else 32
    steps = int(argv[1]) if len(argv) > 1 else 10
    h = 2.0 / (n - 1)
    dt = 0.2 * h
    u, v = initial_state(n)
    dot_mode = dgad.mode() == "dot"
    for field in (u, v):
        for row in field:
            dgad.input_array(row)   # each element becomes a marked float
            if dot_mode:
                dgad.set_dot(row, 1.0)  # each element: a new float with dot value 1
    start = time.perf_counter()
    for _ in range(steps):
        u, v = step(u, v, n, dt, h)
    result = norm(u, v)
    elapsed = time.perf_counter() - start
    dgad.output(result)
    # A passive copy: formatting an active float takes its bits apart.
    print(repr(float(dgad.passive(result))))
    if timed:
        print("burgers: time %.6f" % elapsed, file=sys.stderr)
    if dot_mode:
        print("burgers: dot %r" % dgad.get_dot(result), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
