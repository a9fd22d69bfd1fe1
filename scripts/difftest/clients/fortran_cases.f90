! Fortran cases (gfortran): intrinsics on an array, matmul and a LAPACK
! solve (reference LAPACK).  Protocol as in dt.h: `prog CASE INFILE`.
program fortran_cases
  use dgad
  implicit none
  character(len=64) :: cname, fname
  double precision :: buf(1000), y(100)
  double precision, allocatable :: x(:), a(:,:), b(:,:)
  integer :: n, ios, i, m, info
  integer :: ipiv(100)
  call get_command_argument(1, cname)
  call get_command_argument(2, fname)
  open(10, file=fname, status='old')
  n = 0
  do
     read(10, *, iostat=ios) buf(n + 1)
     if (ios /= 0) exit
     n = n + 1
  end do
  close(10)
  allocate(x(n))
  x = buf(1:n)
  do i = 1, n
     call dgad_input(x(i))
  end do
  select case (trim(cname))
  case ('intrinsics')
     m = 0
     do i = 1, n
        m = m + 1; y(m) = exp(x(i)) * sin(x(i)) + log(x(i))**2 + sqrt(x(i)) + atan2(x(i), 1.5d0 - x(i))
     end do
     m = m + 1; y(m) = sum(x**3)
     m = m + 1; y(m) = product(x)
     m = m + 1; y(m) = maxval(x * cos(x))
     m = m + 1; y(m) = norm2(x)
     m = m + 1; y(m) = dot_product(x, x(n:1:-1))
  case ('matmul_solve')
     m = int(sqrt(dble(n)) + 0.5d0)
     allocate(a(m, m), b(m, 1))
     a = reshape(x, [m, m])
     a = matmul(a, transpose(a)) + a
     b(:, 1) = [(dble(i), i = 1, m)]
     call dgesv(m, 1, a, m, ipiv, b, m, info)
     y(1:m) = b(:, 1)
  case default
     stop 2
  end select
  if (trim(cname) == 'matmul_solve') then
     m = int(sqrt(dble(n)) + 0.5d0)
  end if
  do i = 1, m
     call dgad_output(y(i))
     write(*, '(a, es26.17e3)') 'y ', y(i)
  end do
end program fortran_cases
