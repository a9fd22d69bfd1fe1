! A Fortran client written for Derivgrind, unchanged: x = 0.75 and z = 2.5
! are AD inputs (dg_inputf, Derivgrind's c_loc interface), y = sin(x)*z**2 the output (dg_outputf);
! dy/dx = cos(x)*z**2, dy/dz = 2*sin(x)*z. In forward mode (no --record)
! the program seeds dot(x) = 1, dot(z) = 0 itself and prints dot(y).
! Built as Derivgrind's documentation says:
!   gfortran prog.f90 -I$PREFIX/include/valgrind \
!            $PREFIX/lib/valgrind/libderivgrind_clientrequests-amd64.a
program derivgrind_style
  use iso_c_binding
  use derivgrind_clientrequests
  implicit none
  double precision, target :: x, z, y, xdot, zdot, ydot
  character(len=16) :: mode
  x = 0.75d0
  z = 2.5d0
  mode = ''
  if (command_argument_count() >= 1) call get_command_argument(1, mode)
  if (trim(mode) == 'dot') then
    xdot = 1.0d0
    zdot = 0.0d0
    call dg_set_dotvalue(c_loc(x), c_loc(xdot), 8)
    call dg_set_dotvalue(c_loc(z), c_loc(zdot), 8)
  else
    call dg_inputf(c_loc(x))
    call dg_inputf(c_loc(z))
  end if
  y = sin(x) * z**2
  if (trim(mode) == 'dot') then
    call dg_get_dotvalue(c_loc(y), c_loc(ydot), 8)
    print '(ES25.17)', ydot
  else
    call dg_outputf(c_loc(y))
    print '(ES25.17)', y
  end if
end program derivgrind_style
