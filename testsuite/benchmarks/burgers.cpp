// 2-D viscous Burgers' equation, finite differences on an n x n grid: the
// numeric benchmark of the Derivgrind papers, and the C++ twin of
// burgers.py (same algorithm, same operations in the same order, so values
// and gradients of the two agree).
//
//     burgers [N [STEPS]]          (default 32 10)
//
//     u_t + u u_x + v u_y = nu (u_xx + u_yy),  v_t + u v_x + v v_y = nu (v_xx + v_yy)
//
// on [0, 2]^2: upwind differences for the advection, central ones for the
// diffusion, explicit Euler steps; the boundary keeps its initial values.
// AD inputs: the initial state, all of u then all of v, row by row (2 N^2
// values, DG_INPUTF); AD output: the norm of the final state,
// sqrt(sum u^2 + v^2) (DG_OUTPUTF). Prints the norm.
//
// Under dgad's forward mode (DGAD_MODE=dot) every initial value also gets
// dot value 1 (DG_SET_DOTVALUE), and the norm's dot value, its derivative
// along all-ones, is printed on stderr as `burgers: dot <value>`. Natively
// and in record mode nothing of this happens.
//
// Build: g++ -O3 -I<dgad>/include burgers.cpp -o burgers
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <valgrind/derivgrind.h>

namespace {

constexpr double kNu = 0.01;
constexpr double kPi = 3.141592653589793;

using Field = std::vector<double>;  // n*n values, row i at [i*n, i*n + n)

void initial_state(int n, Field &u, Field &v) {
    const double h = 2.0 / (n - 1);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            const double sx = std::sin(0.5 * kPi * (i * h));
            const double sy = std::sin(0.5 * kPi * (j * h));
            u[i * n + j] = 1.0 + 0.5 * sx * sy;
            v[i * n + j] = 1.0 + 0.25 * sx * sx * sy;
        }
    }
}

void step(const Field &u, const Field &v, Field &un, Field &vn, int n, double dt, double h) {
    const double c = dt / h;
    const double d = kNu * dt / (h * h);
    un = u;
    vn = v;
    for (int i = 1; i < n - 1; i++) {
        const double *um = &u[(i - 1) * n], *u0 = &u[i * n], *up = &u[(i + 1) * n];
        const double *vm = &v[(i - 1) * n], *v0 = &v[i * n], *vp = &v[(i + 1) * n];
        double *unr = &un[i * n], *vnr = &vn[i * n];
        for (int j = 1; j < n - 1; j++) {
            const double uc = u0[j];
            const double vc = v0[j];
            unr[j] = uc - c * uc * (uc - um[j]) - c * vc * (uc - u0[j - 1]) +
                     d * (up[j] - 2.0 * uc + um[j]) + d * (u0[j + 1] - 2.0 * uc + u0[j - 1]);
            vnr[j] = vc - c * uc * (vc - vm[j]) - c * vc * (vc - v0[j - 1]) +
                     d * (vp[j] - 2.0 * vc + vm[j]) + d * (v0[j + 1] - 2.0 * vc + v0[j - 1]);
        }
    }
}

double norm(const Field &u, const Field &v) {
    double s = 0.0;
    for (double x : u) s += x * x;
    for (double x : v) s += x * x;
    return std::sqrt(s);
}

}  // namespace

int main(int argc, char **argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 32;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
    if (n < 3 || steps < 0) {
        std::fprintf(stderr, "usage: burgers [N >= 3 [STEPS >= 0]]\n");
        return 2;
    }
    const double h = 2.0 / (n - 1);
    const double dt = 0.2 * h;
    Field u(n * n), v(n * n), un(n * n), vn(n * n);
    initial_state(n, u, v);
    for (double &x : u) DG_INPUTF(x);
    for (double &x : v) DG_INPUTF(x);
    const bool dot_mode = DG_GET_MODE == 'd';
    if (dot_mode) {
        const double one = 1.0;
        for (double &x : u) DG_SET_DOTVALUE(&x, &one, sizeof x);
        for (double &x : v) DG_SET_DOTVALUE(&x, &one, sizeof x);
    }
    for (int s = 0; s < steps; s++) {
        step(u, v, un, vn, n, dt, h);
        u.swap(un);
        v.swap(vn);
    }
    double result = norm(u, v);
    DG_OUTPUTF(result);
    // Printed from a passive copy: printf takes an active double's bits
    // apart, which dgad would report on stderr.
    double shown = result;
    unsigned long long passive = 0;
    DG_SET_INDEX(&shown, &passive);
    std::printf("%.17g\n", shown);
    if (dot_mode) {
        double dot = 0.0;
        DG_GET_DOTVALUE(&result, &dot, sizeof dot);
        std::fprintf(stderr, "burgers: dot %.17g\n", dot);
    }
    return 0;
}
