"""numpy / SciPy cases: name -> (dtype, function of a 1-d array).

Shared by the client (clients/py_cases.py, which marks the inputs and
outputs under dgad) and the driver (which evaluates the float64 version
natively, in process, for the finite differences: float32 cases are
compared with the derivative of the same formula in float64)."""
import numpy as np


def _np_cases():
    c = {}
    c["abs"] = lambda x: np.abs(x)
    c["sqrt"] = lambda x: np.sqrt(x)
    c["exp"] = lambda x: np.exp(x)
    c["log"] = lambda x: np.log(x)
    c["sin"] = lambda x: np.sin(x)
    c["cos"] = lambda x: np.cos(x)
    c["tanh"] = lambda x: np.tanh(x)
    c["arctan"] = lambda x: np.arctan(x)
    c["hypot"] = lambda x: np.hypot(x[:len(x) // 2], x[len(x) // 2:])
    c["arctan2"] = lambda x: np.arctan2(x[:len(x) // 2], x[len(x) // 2:])
    c["power"] = lambda x: np.power(x[:len(x) // 2], x[len(x) // 2:])
    c["square"] = lambda x: np.square(x)
    c["maximum"] = lambda x: np.maximum(x[:len(x) // 2], x[len(x) // 2:])
    c["where"] = lambda x: np.where(x > 1, x * x, -x)
    c["clip"] = lambda x: np.clip(x, 0.5, 1.25)
    c["sum"] = lambda x: np.sum(x * x)
    c["prod"] = lambda x: np.prod(x)
    c["cumsum"] = lambda x: np.cumsum(x * x)
    c["mean_std"] = lambda x: np.array([x.mean(), x.std()])
    c["dot"] = lambda x: np.dot(x[:len(x) // 2], x[len(x) // 2:])
    c["matmul"] = lambda x: (x[:6].reshape(2, 3) @ x[6:12].reshape(3, 2)).ravel()
    # 100 x 100 @ 100 x 100: numpy's bundled OpenBLAS runs it on its worker threads
    # (started at import, i.e. under dgad)
    c["matmul100"] = lambda x: (x[:10000].reshape(100, 100) @ x[10000:20000].reshape(100, 100)).ravel()
    c["linalg_solve"] = lambda x: np.linalg.solve(x[:9].reshape(3, 3), x[9:12])
    c["linalg_det"] = lambda x: np.linalg.det(x[:9].reshape(3, 3))
    c["linalg_inv"] = lambda x: np.linalg.inv(x[:9].reshape(3, 3)).ravel()
    c["linalg_norm"] = lambda x: np.linalg.norm(x)
    c["linalg_eigvalsh"] = lambda x: np.linalg.eigvalsh((x[:9].reshape(3, 3) + x[:9].reshape(3, 3).T))
    c["fft"] = lambda x: np.concatenate([np.fft.fft(x).real, np.fft.fft(x).imag])
    c["rfft_abs"] = lambda x: np.abs(np.fft.rfft(x))
    return c


def _sp_cases():
    import scipy.special as S
    import scipy.integrate as I
    import scipy.optimize as O
    import scipy.interpolate as IP
    import scipy.linalg as L
    c = {}
    c["sp_j0"] = lambda x: S.j0(x)
    c["sp_j1"] = lambda x: S.j1(x)
    c["sp_jv"] = lambda x: S.jv(1.5, x)
    c["sp_gamma"] = lambda x: S.gamma(x)
    c["sp_gammaln"] = lambda x: S.gammaln(x)
    c["sp_erf"] = lambda x: S.erf(x)
    c["sp_erfc"] = lambda x: S.erfc(x)
    c["sp_expit"] = lambda x: S.expit(x)
    c["sp_logsumexp"] = lambda x: np.array([S.logsumexp(x)])
    c["sp_softmax"] = lambda x: S.softmax(x)
    c["sp_quad"] = lambda x: np.array([I.quad(lambda t: np.exp(-x[0] * t * t) * np.cos(t), 0, x[1], epsabs=1e-13, epsrel=1e-13)[0]])
    c["sp_brentq"] = lambda x: np.array([O.brentq(lambda r: r ** 3 + x[1] * r - x[0], 0.0, 5.0, xtol=1e-15, rtol=1e-15)])
    c["sp_newton"] = lambda x: np.array([O.newton(lambda r: r ** 3 + x[1] * r - x[0], 1.0, fprime=lambda r: 3 * r * r + x[1], tol=1e-15)])
    c["sp_cubicspline"] = lambda x: np.array([IP.CubicSpline(np.arange(len(x) - 1.0), x[:-1])(x[-1]),
                                              IP.CubicSpline(np.arange(len(x) - 1.0), x[:-1])(x[-1], 1)])
    c["sp_linalg_solve"] = lambda x: L.solve(x[:9].reshape(3, 3), x[9:12])
    c["sp_expm"] = lambda x: L.expm(x[:4].reshape(2, 2)).ravel()
    c["sp_odeint"] = lambda x: I.solve_ivp(lambda t, y: [y[1], -x[0] * y[0]], (0, 3), [x[1], 0.0], method="DOP853",
                                             rtol=1e-12, atol=1e-12).y[:, -1]
    return c


def _cases():
    c = {}
    for k, f in _np_cases().items():
        c[k + "_f64"] = (np.float64, f)
        c[k + "_f32"] = (np.float32, f)
    try:
        for k, f in _sp_cases().items():
            c[k] = (np.float64, f)
    except ImportError:
        pass
    return c


CASES = _cases()


def func(name):
    """float64 evaluation (the finite-difference reference)."""
    _, f = CASES[name]
    return lambda x: np.atleast_1d(np.asarray(f(np.asarray(x, dtype=np.float64)), dtype=np.float64)).ravel()


def _points():
    # 16 values: numpy's contiguous loops run their SIMD bodies (8+ elements)
    pos = [0.35, 0.8, 1.1, 1.45, 0.6, 1.7, 0.45, 0.95, 1.25, 1.55, 0.7, 1.05, 0.55, 1.35, 0.85, 1.6]
    mixed = [v if i % 3 else -v for i, v in enumerate(pos)]
    pts = {
        "abs": mixed, "where": [v + 0.03 for v in pos], "clip": [0.3, 0.7, 1.1, 1.4, 0.9, 1.2, 0.4, 0.65, 1.0, 1.3, 0.8, 0.6, 1.45, 0.35, 0.75, 1.15],
        "arctan2": mixed, "maximum": pos[:8] + [v + 0.1 * (-1) ** i for i, v in enumerate(pos[:8][::-1])],
        "matmul": [0.1 * i + 0.3 for i in range(12)],
        "linalg_solve": [2.0, 0.3, -0.4, 0.5, 1.7, 0.2, -0.1, 0.6, 2.2, 1.0, -2.0, 0.5],
        "linalg_det": [2.0, 0.3, -0.4, 0.5, 1.7, 0.2, -0.1, 0.6, 2.2],
        "linalg_inv": [2.0, 0.3, -0.4, 0.5, 1.7, 0.2, -0.1, 0.6, 2.2],
        "linalg_eigvalsh": [2.0, 0.3, -0.4, 0.5, 1.7, 0.2, -0.1, 0.6, 2.2],
        "fft": mixed, "rfft_abs": mixed,
        "prod": pos[:8], "dot": pos, "linalg_norm": pos,
    }
    out = []
    rng = np.random.default_rng(7)
    pts["matmul100"] = [float(v) for v in rng.standard_normal(20000)]
    for k in _np_cases():
        x = pts.get(k, pos)
        out.append((k + "_f64", x, 1e-6, 1e-5))
        # float32: the AD derivative through float32 arithmetic vs the float64 formula
        out.append((k + "_f32", x, 1e-4, 1e-5))
    sp = [("sp_j0", [3.1, 0.7, 12.5]), ("sp_j1", [3.1, 25.0]), ("sp_jv", [3.1, 0.9]), ("sp_gamma", [3.7, 0.3, -1.5]),
          ("sp_gammaln", [7.2, 0.6]), ("sp_erf", [0.4, 1.7, 3.0]), ("sp_erfc", [2.5, 0.3]),
          ("sp_expit", [0.3, -2.0, 4.0]), ("sp_logsumexp", pos), ("sp_softmax", pos), ("sp_quad", [0.7, 2.0]),
          ("sp_brentq", [10.0, 1.0]), ("sp_newton", [10.0, 1.0]),
          ("sp_cubicspline", [float(np.sin(i)) for i in range(10)] + [3.3]),
          ("sp_linalg_solve", pts["linalg_solve"]), ("sp_expm", [0.3, -0.2, 0.5, 0.1]), ("sp_odeint", [2.0, 1.5])]
    for k, x in sp:
        tol = 1e-4 if k in ("sp_quad", "sp_brentq", "sp_odeint") else 1e-6
        out.append((k, x, tol, 1e-5))
    return out


CASE_POINTS = _points()
