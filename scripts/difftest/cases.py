"""Case table of the difftest driver and how the client programs are built.

Tolerance conventions (normwise relative error of the Jacobian):
  * analytic references: 1e-9 -- the library's value of the formula
    (e.g. -J1 for J0') is accurate to ~1e-15 relative, the derivative dgad
    computes through the library's algorithm (series, recurrences,
    continued fractions) is exact for the algorithm's approximant, which
    differs from the true derivative by the approximation error amplified
    by differentiation (~1e-12 seen); 1e-9 leaves margin, a real bug is off
    by O(1).
  * central differences with step h: error ~ h^2 f''' / 6 + eps |f| / h;
    h = 1e-5 relative gives ~1e-10 for smooth functions: tolerance 1e-6.
    Linear functions of the inputs (splines in the data, matrix products,
    solves in b) have no truncation error: tolerance 1e-7.
  * iterative solvers (adaptive quadrature, ODE step control, root finding)
    differentiate the iteration, not the limit: tolerance per case.
  * float programs (libm client *_f) against differences of the float
    program itself: h = 1e-3, rounding error ~ eps32 |f| / h ~ 1e-4: 1e-3.
  * numpy float32 cases against the float64 formula's differences: the AD
    derivative through float32 arithmetic is off by ~1e-6 relative: 1e-4.
  * FFTW (linear: every Jacobian entry analytic): double 1e-9 as above (the
    AD Jacobian is FFTW's twiddles multiplied out, ~1e-15 off); single
    precision 1e-5: the partials are FFTW's float twiddles (eps32 = 6e-8
    each, up to log2 n stages) and dot mode keeps float tangents as floats.
    Projection mode (n = 1024) against differences: linear, 1e-7.
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CL = os.path.join(HERE, "clients")
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
INC = os.path.join(ROOT, "include")
MA = "/usr/lib/x86_64-linux-gnu"
# DT_RPATH (not RUNPATH) so that liblapack.so.3's own libblas.so.3 is the reference one
# too (the alternatives link points to OpenBLAS once libopenblas-dev is installed)
REFBLAS = ("-Wl,--no-as-needed -Wl,--disable-new-dtags -L%s/blas -L%s/lapack -Wl,-rpath,%s/lapack -Wl,-rpath,%s/blas"
           % (MA, MA, MA, MA))
OPENBLAS = "-Wl,--disable-new-dtags -L%s/openblas-pthread -Wl,-rpath,%s/openblas-pthread" % (MA, MA)

# client name -> build command (format: {src}, {out}, {inc})
CLIENTS = {
    "gsl": "gcc -O2 -I{inc} {cl}/gsl_cases.c -o {out} -lgsl -lgslcblas -lm",
    "lapack_ref": "gcc -O2 -I{inc} {cl}/lapack_cases.c -o {out} %s -llapack -lblas -lm" % REFBLAS,
    "lapack_openblas": "gcc -O2 -I{inc} {cl}/lapack_cases.c -o {out} %s -lopenblas -lm" % OPENBLAS,
    "cblas_openblas": "gcc -O2 -I{inc} -I/usr/include/x86_64-linux-gnu/openblas-pthread {cl}/cblas_cases.c -o {out} %s -lopenblas -lm" % OPENBLAS,
    "cblas_ref": "gcc -O2 -I{inc} -I/usr/include/x86_64-linux-gnu/openblas-pthread {cl}/cblas_cases.c -o {out} %s -lblas -lm" % REFBLAS,
    "eigen_O2": "g++ -O2 -I{inc} -I/usr/include/eigen3 {cl}/eigen_cases.cpp -o {out}",
    "eigen_O3native": "g++ -O3 -march=native -I{inc} -I/usr/include/eigen3 {cl}/eigen_cases.cpp -o {out}",
    "eigen_clang_O3native": "clang++ -O3 -march=native -I{inc} -I/usr/include/eigen3 {cl}/eigen_cases.cpp -o {out}",
    # Boost.Math (header-only): default policy (double computed in long double, x87)
    # and promote_double<false> (double arithmetic, SSE/AVX)
    "boost_O2": "g++ -O2 -I{inc} {cl}/boost_cases.cpp -o {out}",
    "boost_O3native_nopromote": "g++ -O3 -march=native -DBOOST_MATH_PROMOTE_DOUBLE_POLICY=false -I{inc} {cl}/boost_cases.cpp -o {out}",
    # FFTW 3.3.10 (Debian: SSE2 and AVX codelets, no FMA); both precisions
    "fftw": "gcc -O2 -I{inc} {cl}/fftw_cases.c -o {out} -lfftw3f -lfftw3 -lm",
    "libm_gcc_O0": "gcc -O0 -I{inc} {cl}/libm_cases.c -o {out} -lm",
    "libm_gcc_O3native": "gcc -O3 -march=native -I{inc} {cl}/libm_cases.c -o {out} -lm",
    "libm_gcc_fastmath": "gcc -O3 -march=native -ffast-math -I{inc} {cl}/libm_cases.c -o {out} -lm",
    "libm_clang_O3native": "clang -O3 -march=native -I{inc} {cl}/libm_cases.c -o {out} -lm",
    "libm_clang_fastmath": "clang -O3 -march=native -ffast-math -I{inc} {cl}/libm_cases.c -o {out} -lm",
    "fortran_O3native": "gfortran -O3 -march=native -I{fc} {cl}/fortran_cases.f90 -o {out} -L{fc} -ldgadclient %s -llapack -lblas" % REFBLAS,
}


# `difftest.py --static`: every client linked statically (`-static`, run by
# dgad inside dgad-static-host, decision 45), built as NAME_static.
STATIC = False
# What the static link needs beyond the dynamic one (the archives' own
# dependencies, which the shared libraries name themselves).
STATIC_LIBS = {
    "lapack_ref": "-lgfortran -lquadmath -lm",
    "lapack_openblas": "-lgfortran -lquadmath -lpthread -lm",
    "cblas_openblas": "-lgfortran -lquadmath -lpthread -lm",
    "cblas_ref": "-lgfortran -lquadmath -lm",
    "fortran_O3native": "-lgfortran -lquadmath -lm",
}


def binary(name):
    return name + ("_static" if STATIC else "")


def build(bdir, names):
    for name in sorted(names):
        if name == "py":
            continue
        out = os.path.join(bdir, binary(name))
        fc = os.path.join(bdir, "fclient")
        if name.startswith("fortran") and not os.path.exists(os.path.join(fc, "libdgadclient.a")):
            subprocess.run(["nice", "-n", "10", "make", "-s", "-C", os.path.join(ROOT, "preload/client"), "BUILD=" + fc],
                           check=True)
        cmd = CLIENTS[name].format(inc=INC, cl=CL, out=out, root=ROOT, fc=fc)
        if STATIC:
            cmd += " -static " + STATIC_LIBS.get(name, "")
        srcs = [w for w in cmd.split() if w.startswith(CL)]
        if os.path.exists(out) and all(os.path.getmtime(s) <= os.path.getmtime(out) for s in srcs):
            continue
        print("build:", cmd, file=sys.stderr)
        r = subprocess.run(["nice", "-n", "10"] + cmd.split(), capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            raise SystemExit("build of %s failed" % name)


class Case:
    def __init__(self, group, client, case, x0, ref="fd", h=1e-5, h_rel=True, tol=1e-6,
                 envs=None, full=None, ndir=2, check_fd=True, label=None, cpuids=None, fixed=0,
                 values_vary=()):
        self.group, self.client, self.case = group, client, case
        self.x0 = list(x0)
        self.ref, self.h, self.h_rel, self.tol = ref, h, h_rel, tol
        self.envs = envs or [("", {})]
        self.full, self.ndir, self.check_fd = full, ndir, check_fd
        self.name = "%s/%s%s" % (client, case, ("@" + label) if label else "")
        self.cpuids = cpuids
        self.fixed = fixed  # leading inputs that are integer parameters (not perturbed)
        # labels of variants whose printed values differ from run to run natively too
        # (FFTW_MEASURE: the plan is chosen by timing): values not compared, noted
        self.values_vary = tuple(values_vary)
        self.pyfunc = None
        if client == "py":
            import py_cases_native  # noqa: E402
            self.pyfunc = py_cases_native.func(case)

    def command(self, bdir):
        if self.client == "py":
            return [sys.executable, os.path.join(CL, "py_cases.py"), self.case]
        return [os.path.join(bdir, binary(self.client)), self.case]

    def variants(self, cpuids):
        out = []
        for cpu in cpuids:
            if self.cpuids and cpu not in self.cpuids:
                continue
            for lab, env in self.envs:
                e = dict(env)
                e["DGAD_CPUID"] = cpu
                out.append(("cpu=%s%s" % (cpu, (" " + lab) if lab else ""), e))
        return out

    def variants_desc(self):
        return [lab for lab, _ in self.envs]


def rmat(n, seed, spd=False, diag=0.0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    if spd:
        A = A @ A.T + n * np.eye(n)
    return A + diag * np.eye(n)


def all_cases():
    cs = []
    # ---------------- GSL special functions (analytic where documented)
    sf = [
        ("sf_bessel_J0", [3.1]), ("sf_bessel_J0", [0.7]), ("sf_bessel_J0", [12.5]), ("sf_bessel_J0", [40.0]),
        ("sf_bessel_J1", [3.1]), ("sf_bessel_J1", [25.0]), ("sf_bessel_Y0", [2.2]), ("sf_bessel_K0", [1.3]),
        ("sf_bessel_I0", [4.5]), ("sf_gamma", [3.7]), ("sf_gamma", [0.3]), ("sf_gamma", [-1.5]),
        ("sf_gamma", [12.3]), ("sf_lngamma", [7.2]), ("sf_lngamma", [0.6]), ("sf_psi", [2.5]),
        ("sf_erf", [0.4]), ("sf_erf", [1.7]), ("sf_erf", [3.0]), ("sf_erfc", [2.5]),
        ("sf_expint_E1", [0.8]), ("sf_expint_E1", [5.0]), ("sf_expint_Ei", [1.5]),
        ("sf_dilog", [0.3]), ("sf_dilog", [-2.0]), ("sf_airy_Ai", [1.2]), ("sf_airy_Ai", [-3.3]),
        ("sf_zeta", [2.5]), ("sf_ellint_Kcomp", [0.5]), ("sf_lambert_W0", [1.5]),
        ("sf_legendre_P3", [0.4]), ("sf_atanint", [0.9]), ("sf_Si", [2.0]), ("sf_log1plusx", [0.2]),
        ("sf_synchrotron_1", [1.0]), ("sf_beta", [2.5, 1.7]), ("sf_hyperg_2F1", [0.5, 1.5, 2.5, 0.3]),
        ("sf_bessel_Jnu", [1.5, 3.1]),
    ]
    for name, x in sf:
        cs.append(Case("gsl", "gsl", name, x, ref="analytic", tol=1e-9 if name not in ("sf_zeta", "sf_synchrotron_1", "sf_hyperg_2F1") else 1e-6,
                       label="x=%s" % ",".join("%g" % v for v in x)))
    # integration: analytic d/db (the upper limit), FD d/da; adaptive: tol 1e-6
    cs.append(Case("gsl", "gsl", "integ_qags", [0.7, 2.0], tol=1e-6))
    cs.append(Case("gsl", "gsl", "integ_qag", [0.7, 2.0], tol=1e-6))
    cs.append(Case("gsl", "gsl", "integ_qagiu", [0.5], tol=1e-5))
    # ODE: analytic (exact solution); adaptive step control with 1e-13: tol 1e-6
    cs.append(Case("gsl", "gsl", "ode_rk8pd", [2.0, 1.5], ref="analytic", tol=1e-6))
    cs.append(Case("gsl", "gsl", "ode_rk4_fixed", [2.0, 1.5], tol=1e-6))
    # roots: analytic implicit-function derivative
    cs.append(Case("gsl", "gsl", "root_newton", [10.0, 1.0], ref="analytic", tol=1e-9))
    cs.append(Case("gsl", "gsl", "root_brent", [10.0, 1.0], ref="analytic", tol=1e-4))
    # splines: data = sin(i), t = 3.3 (linear in the data: FD exact)
    data = [float(np.sin(i)) for i in range(10)] + [3.3]
    for s in ("spline_cspline", "spline_akima", "spline_steffen"):
        cs.append(Case("gsl", "gsl", s, data, tol=1e-6))
    n = 5
    A = rmat(n, 1, diag=3.0)
    b = np.arange(1, n + 1, dtype=float)
    cs.append(Case("gsl", "gsl", "linalg_LU_solve", list(A.ravel()) + list(b), ref="analytic", tol=1e-9))
    cs.append(Case("gsl", "gsl", "linalg_QR_solve", list(A.ravel()) + list(b), ref="analytic", tol=1e-9))
    S = rmat(n, 2, spd=True)
    cs.append(Case("gsl", "gsl", "linalg_chol_solve", list(S.ravel()) + list(b), tol=1e-6))
    cs.append(Case("gsl", "gsl", "linalg_det", list(A.ravel()), tol=1e-6))
    cs.append(Case("gsl", "gsl", "linalg_SV", list(A.ravel()), tol=1e-6))
    cs.append(Case("gsl", "gsl", "eigen_symm", list(S.ravel()), tol=1e-6))
    cs.append(Case("gsl", "gsl", "blas_dgemm", list(rmat(6, 3).ravel()) + list(rmat(6, 4).ravel()), tol=1e-7))

    # polynomials, FFT, least squares, statistics, non-symmetric eigenvalues, complex functions
    cs.append(Case("gsl", "gsl", "poly_cubic", [-6.2, 10.9, -5.7], tol=1e-6))          # roots ~1, 2.1, 3.1
    cs.append(Case("gsl", "gsl", "poly_complex_solve", [2.0, -1.5, 0.3, 0.7], tol=1e-6))
    cs.append(Case("gsl", "gsl", "fft_radix2", [float(np.sin(1.3 * i) + 0.1 * i) for i in range(16)], tol=1e-7))
    cs.append(Case("gsl", "gsl", "fft_mixed", [float(np.cos(0.7 * i) - 0.05 * i) for i in range(12)], tol=1e-7))
    cs.append(Case("gsl", "gsl", "multifit_quadratic", [float(np.exp(0.2 * i) + 0.3 * np.sin(i)) for i in range(9)], tol=1e-6))
    cs.append(Case("gsl", "gsl", "stats", [0.3, 1.7, -0.4, 2.2, 0.9, 1.1, -1.3, 0.55, 3.1], tol=1e-6))
    cs.append(Case("gsl", "gsl", "eigen_nonsymm", list(rmat(4, 30, diag=2.0).ravel()), tol=1e-6))
    cs.append(Case("gsl", "gsl", "complex_fns", [1.3, 0.7], tol=1e-6, label="z=1.3+0.7i"))
    cs.append(Case("gsl", "gsl", "complex_fns", [3.7, 0.7], tol=1e-6, label="z=3.7+0.7i"))
    # ---------------- LAPACK (reference and OpenBLAS's)
    n = 6
    A = rmat(n, 5, diag=2.0)
    S = rmat(n, 6, spd=True)
    b = np.linspace(-1, 2, n)
    Ar = rmat(n, 7)[:, :4]  # least squares 6 x 4
    thr = [("threads=default", {}), ("OPENBLAS_NUM_THREADS=1", {"OPENBLAS_NUM_THREADS": "1"})]
    for cl in ("lapack_ref", "lapack_openblas"):
        e = thr if cl == "lapack_openblas" else None
        cs.append(Case("lapack", cl, "dgesv", list(A.ravel()) + list(b), ref="analytic", tol=1e-9, envs=e))
        cs.append(Case("lapack", cl, "dposv", list(S.ravel()) + list(b), tol=1e-6, envs=e))
        cs.append(Case("lapack", cl, "dsyev", list(S.ravel()), tol=1e-6, envs=e))
        # seed 30: eigenvalues >= 1.58 apart (seed 5 has a pair with imaginary part 0.0075,
        # where central differences with h = 1e-5 are off by 0.2 %)
        cs.append(Case("lapack", cl, "dgeev", list(rmat(n, 30, diag=2.0).ravel()), tol=1e-6, envs=e))
        cs.append(Case("lapack", cl, "dgels", list(Ar.ravel()) + list(b), tol=1e-6, envs=e))
        cs.append(Case("lapack", cl, "dgetri", list(A.ravel()), tol=1e-6, envs=e))
    # ---------------- BLAS: sizes 8, 96, 300 (m, n, k) ; threads 1 / default
    for cl in ("cblas_openblas", "cblas_ref"):
        envs = thr if cl == "cblas_openblas" else None
        for (m, nn, k) in ((8, 8, 8), (96, 96, 96), (128, 128, 128), (300, 8, 300), (300, 300, 4), (300, 300, 16)):
            rng = np.random.default_rng(m + nn + k)
            x = [m, nn, k] + list(rng.standard_normal(m * k + k * nn))
            cs.append(Case("openblas" if cl == "cblas_openblas" else "blas", cl, "dgemm", x, h=1e-3, h_rel=False,
                           tol=1e-7, envs=envs, full=(m == 8), fixed=3, label="%dx%dx%d" % (m, nn, k)))
        for (m, nn) in ((8, 8), (96, 96), (300, 300)):
            rng = np.random.default_rng(m)
            x = [m, nn, 0] + list(rng.standard_normal(m * nn + nn))
            cs.append(Case("openblas" if cl == "cblas_openblas" else "blas", cl, "dgemv", x, h=1e-3, h_rel=False,
                           tol=1e-7, envs=envs, full=(m == 8), fixed=3, label="%dx%d" % (m, nn)))
        for (m, nn) in ((8, 8), (96, 4), (300, 2)):
            rng = np.random.default_rng(m)
            T = np.tril(rng.standard_normal((m, m))) + 4 * np.eye(m)
            x = [m, nn, 0] + list(T.ravel()) + list(rng.standard_normal(m * nn))
            cs.append(Case("openblas" if cl == "cblas_openblas" else "blas", cl, "dtrsm", x, h=1e-6, h_rel=False,
                           tol=1e-6, envs=envs, full=False, fixed=3, label="%dx%d" % (m, nn)))
    # ---------------- Eigen
    n = 6
    A = rmat(n, 8, diag=2.0)
    S = rmat(n, 9, spd=True)
    b = np.linspace(0.5, 1.5, n)
    for cl in ("eigen_O2", "eigen_O3native", "eigen_clang_O3native"):
        cs.append(Case("eigen", cl, "lu_solve", list(A.ravel()) + list(b), ref="analytic", tol=1e-9))
        cs.append(Case("eigen", cl, "qr_solve", list(A.ravel()) + list(b), ref="analytic", tol=1e-9))
        cs.append(Case("eigen", cl, "llt_solve", list(S.ravel()) + list(b), tol=1e-6))
        cs.append(Case("eigen", cl, "ldlt_solve", list(S.ravel()) + list(b), tol=1e-6))
        cs.append(Case("eigen", cl, "expm", list((0.3 * rmat(4, 10)).ravel()), tol=1e-6))
        cs.append(Case("eigen", cl, "selfadjoint_eig", list(S.ravel()), tol=1e-6))
        # 16 points: full SIMD packets in every ISA
        pts = [float(v) for v in np.linspace(0.21, 2.9, 16)]
        cs.append(Case("eigen", cl, "array_math_d", pts, tol=1e-6))
        cs.append(Case("eigen", cl, "array_math_f", pts, h=1e-3, tol=2e-3))
        cs.append(Case("eigen", cl, "matmul_f", list(rmat(6, 11).ravel()) + list(rmat(6, 12).ravel()),
                       h=1e-2, h_rel=False, ref="analytic", tol=1e-6))
    # ---------------- Boost.Math special functions (analytic where Boost documents the
    # derivative or it is a textbook formula; orders and shape parameters by differences).
    # Points off the integers (Boost's tgamma multiplies by a factorial table entry there,
    # as GSL's does: FINDINGS "Not dgad bugs") and in several of each algorithm's regions.
    bsf = [
        ("tgamma", [[3.7], [0.3], [-1.5], [12.3]]), ("lgamma", [[7.2], [0.6], [25.3]]),
        ("digamma", [[2.5], [0.3], [12.7]]), ("trigamma", [[1.7], [6.3]]), ("polygamma3", [[1.4], [8.2]]),
        ("tgamma1pm1", [[0.2], [-0.4]]),
        ("erf", [[0.4], [1.7], [3.0]]), ("erfc", [[2.5], [0.3], [7.1]]),
        ("erf_inv", [[0.3], [0.9], [-0.99]]), ("erfc_inv", [[0.3], [1.6], [0.02]]),
        ("bessel_j0", [[3.1], [0.7], [12.5], [40.0]]), ("bessel_j1", [[3.1], [25.0]]),
        ("bessel_y0", [[2.2], [9.5]]), ("bessel_i0", [[4.5], [0.8]]), ("bessel_k0", [[1.3], [0.4]]),
        ("sph_bessel2", [[1.3], [7.7]]),
        ("legendre_p5", [[0.4], [-0.85]]), ("legendre_p12", [[0.3], [0.95]]), ("hermite5", [[1.3], [-0.6]]),
        ("laguerre4", [[2.1], [0.4]]), ("chebyshev_t7", [[0.6], [-0.93]]),
        ("zeta", [[2.5], [0.4], [7.3], [-1.7]]),
        ("expint_ei", [[1.5], [0.3], [12.0], [-0.8]]), ("expint_e1", [[0.8], [5.0]]), ("expint_e3", [[1.2], [0.2]]),
        ("ellint_1c", [[0.5], [0.9]]), ("ellint_2c", [[0.5], [0.9]]),
        # sinc_pi(5e-5): Boost's Taylor branch 1 - x^2/6, whose derivative -x/3 is off the true
        # one by x^2/10 = 2.5e-10 relative (seen: 2.5e-10, inside 1e-9)
        ("sinc_pi", [[0.7], [3.3], [5e-5]]), ("log1p", [[0.2], [-0.7], [3.5]]), ("expm1", [[0.3], [-0.05], [2.5]]),
        ("cbrt", [[2.7], [-0.35]]), ("airy_ai", [[1.2], [-3.3]]), ("airy_bi", [[0.8], [-2.1]]),
        ("airy_ai_prime", [[1.2], [-3.3]]), ("lambert_w0", [[1.5], [-0.2], [30.0]]),
        ("beta", [[2.5, 1.7], [0.6, 3.3], [12.3, 20.6]]), ("tgamma_ratio", [[3.7, 2.2], [25.3, 24.1]]),
        ("cyl_bessel_j", [[1.3, 3.1], [0.7, 25.0], [2.6, 0.4]]), ("cyl_neumann", [[0.6, 2.2], [1.2, 9.0]]),
        ("cyl_bessel_i", [[0.3, 1.3], [2.2, 7.5]]), ("cyl_bessel_k", [[0.3, 1.3], [1.7, 4.0]]),
        # a not a half-integer: for a <= x + 1 < 31 Boost sums a finite series whose length is the
        # only place a enters (d/da = 0, the algorithm's; gamma_p(2.5, 1.7) gave 0 against -0.2665)
        ("gamma_p", [[2.3, 1.7], [7.3, 9.1], [0.4, 0.2]]), ("gamma_q", [[2.3, 4.2], [30.7, 27.0]]),
        ("gamma_p_inv", [[2.5, 0.3], [7.3, 0.9]]),
        ("ibeta", [[2.5, 1.7, 0.3], [12.5, 7.3, 0.6], [0.6, 0.9, 0.8]]),
        ("ibeta_inv", [[2.5, 1.7, 0.3], [12.5, 7.3, 0.6]]),
        ("owens_t", [[0.5, 0.7], [2.3, 0.4], [1.2, 3.5], [6.5, 0.9]]),
        ("jacobi_elliptic", [[0.6, 0.8], [0.3, 2.1]]),
        ("ellint_1i", [[0.5, 0.7], [0.9, 1.3]]), ("ellint_2i", [[0.5, 0.7], [0.9, 1.3]]),
        ("hypot", [[3.1, -1.2]]), ("powm1", [[1.3, 0.004], [2.5, 1.7]]),
        ("hyperg_1f1", [[0.7, 1.9, 0.6], [1.3, 2.4, -3.5]]),
        ("tgamma_f", [[3.7], [0.3]]), ("erf_f", [[0.4], [1.7]]), ("bessel_j0_f", [[3.1]]),
        ("tgamma_l", [[3.7], [0.3]]), ("erf_l", [[0.4], [1.7]]), ("bessel_j0_l", [[3.1], [12.5]]),
        ("lgamma_l", [[7.2]]), ("cyl_bessel_j_l", [[1.3, 3.1]]),
    ]
    # every entry analytic: 1e-9; some entries (orders, shapes, zeta) by differences: 1e-6
    b_fd = {"zeta", "cyl_bessel_j", "cyl_neumann", "cyl_bessel_i", "cyl_bessel_k", "gamma_p", "gamma_q",
            "gamma_p_inv", "ibeta", "ibeta_inv", "jacobi_elliptic", "ellint_1i", "ellint_2i", "hyperg_1f1",
            "cyl_bessel_j_l"}
    for cl in ("boost_O2", "boost_O3native_nopromote"):
        for name, pts in bsf:
            for x in pts:
                tol = 1e-6 if name in b_fd else 1e-9
                if name.endswith("_f"):
                    # the formula at the float input; record mode's partials are f64, but dot
                    # mode keeps a float's tangent as a float (docs/limitations.md): ~3e-8 seen
                    tol = 1e-6
                h = 1e-3 if name.endswith("_f") else 1e-5   # float: differences only informational
                cs.append(Case("boost", cl, name, x, ref="fd" if name in b_fd else "analytic", h=h, tol=tol,
                               label="x=%s" % ",".join("%g" % v for v in x)))
    # ---------------- FFTW3: transforms of a random signal; the size(s) lead the
    # input vector (fixed). Every entry analytic (cos/sin of 2 pi jk/n in long
    # double). Full mode up to 386 x 384 (cheap for FFTW: forced with full=True,
    # without the 2n difference runs above n = 64); n = 1024 in projection mode.
    # Variants: FFTW_NO_SIMD (scalar codelets), arrays 8 bytes off fftw_malloc's
    # alignment (FFTW then plans scalar codelets too), in place, FFTW_MEASURE (the
    # plan is timed in each run, natively too -- 2 different outputs in 6 native
    # runs of n = 64; under dgad it picked SSE2 codelets as well: values_vary).
    fv = [("", {}), ("nosimd", {"DT_FFTW_FLAGS": "nosimd"}), ("off8", {"DT_FFTW_OFFSET": "1"}),
          ("inplace", {"DT_FFTW_FLAGS": "inplace"})]
    fv_measure = fv + [("measure", {"DT_FFTW_FLAGS": "measure"})]

    def sig(k, seed):
        return list(np.random.default_rng(seed).standard_normal(k))
    for name in ("dft_fwd", "dft_bwd"):
        for n in (8, 15, 64, 100, 1024):
            envs = fv_measure if n == 64 else (fv if n in (100, 1024) else None)
            if n == 1024:
                cs.append(Case("fftw", "fftw", name, [n] + sig(2 * n, n), h=1e-3, h_rel=False, tol=1e-7,
                               fixed=1, envs=envs, label="n=%d" % n))
            else:
                cs.append(Case("fftw", "fftw", name, [n] + sig(2 * n, n), ref="analytic", tol=1e-9, fixed=1,
                               full=True, check_fd=n <= 64, envs=envs, label="n=%d" % n, values_vary=("measure",)))
    for name in ("r2c", "c2r"):
        for n in (16, 30, 256):
            k = n if name == "r2c" else 2 * (n // 2 + 1)
            cs.append(Case("fftw", "fftw", name, [n] + sig(k, n + 1), ref="analytic", tol=1e-9, fixed=1,
                           full=True, check_fd=n <= 64, envs=fv if n == 256 else None, label="n=%d" % n))
    for (n0, n1) in ((8, 8), (16, 12)):
        cs.append(Case("fftw", "fftw", "dft2d_fwd", [n0, n1] + sig(2 * n0 * n1, n0 * n1), ref="analytic", tol=1e-9,
                       fixed=2, full=True, check_fd=n0 * n1 <= 64, envs=fv if n0 == 16 else None,
                       label="%dx%d" % (n0, n1)))
    for name in ("redft10", "redft01", "r2hc"):
        cs.append(Case("fftw", "fftw", name, [32] + sig(32, 32), ref="analytic", tol=1e-9, fixed=1, full=True,
                       label="n=32"))
    for name, n in (("dftf_fwd", 8), ("dftf_fwd", 64), ("dftf_bwd", 15), ("r2cf", 30), ("r2cf", 256), ("c2rf", 16)):
        k = 2 * n if name.startswith("dft") else (n if name == "r2cf" else 2 * (n // 2 + 1))
        cs.append(Case("fftw", "fftw", name, [n] + sig(k, n + 2), ref="analytic", h=1e-3, tol=1e-5, fixed=1,
                       full=True, check_fd=n <= 64, envs=fv if n == 64 else None, label="n=%d" % n))
    # ---------------- libm / C (compound formulas)
    for cl in ("libm_gcc_O0", "libm_gcc_O3native", "libm_gcc_fastmath", "libm_clang_O3native", "libm_clang_fastmath"):
        for name in ("poly_d", "poly_f", "poly_l", "vecexp_d", "vecexp_f", "norm_d", "softmax_d", "softmax_f",
                     "mixed_l", "atan2hyp_d", "powlog_f"):
            # no ties in norm_d's max |x_i - 1| (a tie has no derivative)
            x = [0.3, 0.52, 0.71, 0.93, 1.12, 1.33, 1.58, 1.64]
            tol = 1e-3 if name.endswith("_f") else 1e-6
            h = 1e-3 if name.endswith("_f") else 1e-5
            cs.append(Case("libm", cl, name, x, h=h, tol=tol))
    # ---------------- Fortran (LAPACK from Fortran, intrinsics)
    cs.append(Case("fortran", "fortran_O3native", "intrinsics", list(np.linspace(0.3, 1.7, 6)), tol=1e-6))
    cs.append(Case("fortran", "fortran_O3native", "matmul_solve", list(rmat(5, 13, diag=3).ravel()), tol=1e-6))
    # ---------------- numpy / scipy
    import py_cases_native as P
    for name, x, tol, h in P.CASE_POINTS:
        cs.append(Case("scipy" if name.startswith("sp_") else "numpy", "py", name, x, h=h, tol=tol))
    return cs
