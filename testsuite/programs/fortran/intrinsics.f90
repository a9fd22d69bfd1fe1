! Numeric loop over Fortran intrinsics (sin, exp, sqrt, sum, matmul,
! dot_product) printed with fixed formats, which go through libgfortran's
! own formatting code rather than glibc's printf.
program intrinsics
  implicit none
  integer, parameter :: n = 200, dp = kind(1.0d0)
  real(dp) :: x(n), y(n), a(n, n), b(n, n), c(n, n), v(n)
  real(dp) :: acc
  integer :: i, j, step

  do i = 1, n
    x(i) = real(i, dp) / n
    y(i) = sin(x(i) * 3.0_dp) * exp(-x(i)) + sqrt(x(i))
  end do
  do j = 1, n
    do i = 1, n
      a(i, j) = 1.0_dp / real(i + j - 1, dp)
      b(i, j) = cos(real(i * j, dp) * 0.001_dp)
    end do
  end do

  acc = 0.0_dp
  do step = 1, 50
    v = sin(x * step) + exp(-y / step)
    acc = acc + dot_product(v, y) / step
  end do

  c = matmul(a, b)
  write (*, '(A, F24.15)') 'sum(y)          = ', sum(y)
  write (*, '(A, F24.15)') 'dot_product     = ', dot_product(x, y)
  write (*, '(A, F24.15)') 'loop acc        = ', acc
  write (*, '(A, ES24.15)') 'sum(matmul)     = ', sum(c)
  write (*, '(A, ES24.15)') 'trace(matmul)   = ', sum([(c(i, i), i = 1, n)])
  write (*, '(A, 3F20.12)') 'c(1,1:3)        = ', c(1, 1:3)
  write (*, '(A, F20.12)') 'maxval(sqrt(c)) = ', maxval(sqrt(abs(c)))
  write (*, '(A, I0)') 'count(y > 1)    = ', count(y > 1.0_dp)
  write (*, '(A)') 'END intrinsics'
end program intrinsics
