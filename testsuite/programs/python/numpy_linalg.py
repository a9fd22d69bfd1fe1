# numpy linear algebra through LAPACK/BLAS on a fixed matrix: solve, inv,
# eig, det. Printed rounded; eigenvalues sorted because LAPACK does not
# promise an order.
import numpy as np

np.set_printoptions(precision=8, suppress=True, linewidth=120)
a = np.array([[4.0, -2.0, 1.0, 0.5, 0.0],
              [-2.0, 4.0, -2.0, 1.0, 0.25],
              [1.0, -2.0, 4.0, -2.0, 1.0],
              [0.5, 1.0, -2.0, 4.0, -2.0],
              [0.0, 0.25, 1.0, -2.0, 4.0]])
b = np.arange(1.0, 6.0)
x = np.linalg.solve(a, b)
print("solve:", np.round(x, 8))
print("residual small:", bool(np.linalg.norm(a @ x - b) < 1e-10))
print("inv:\n", np.round(np.linalg.inv(a), 8))
w = np.linalg.eig(a)[0]
print("eig:", np.round(np.sort(w.real), 8))
print("det:", round(float(np.linalg.det(a)), 8))
rng = np.random.default_rng(12345)
m = rng.standard_normal((200, 200))
print("random solve checksum:", round(float(np.linalg.solve(m, np.ones(200)).sum()), 6))
print("matmul trace:", round(float(np.trace(m @ m.T)), 6))
print("END numpy_linalg")
