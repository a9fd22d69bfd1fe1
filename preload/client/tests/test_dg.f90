! Uses module derivgrind_clientrequests the way Derivgrind's Fortran tests
! do (c_loc pointers, size in bytes).  Natively nothing may change; under
! tests/fakegrind the requests must reach the variables' addresses, which is
! checked through the dgad module's dgad_get_index / dgad_get_dot.
program test_dg
  use derivgrind_clientrequests
  use, intrinsic :: iso_c_binding
  use dgad, only: dgad_get_index, dgad_get_dot, dgad_mode, dgad_index_kind
  implicit none
  real(4), target :: xf = 1.5
  real(8), target :: xd = 2.5d0, y, dd = 0.25d0, got
  real(10), target :: xl = 3.5_10
  real(8), target :: arr(3) = [1d0, 2d0, 3d0]
  character :: mode
  logical :: rec, dot
  integer :: fails = 0, k

  mode = dgad_mode()
  rec = mode == 'b'
  dot = mode == 'd'
  call check(rec .or. dot .or. mode == achar(0), 'mode')

  ! Inputs: 1, 2, 3; array elements 4, 5, 6.
  call dg_inputf(c_loc(xf))
  call dg_inputf(c_loc(xd))
  call dg_inputf(c_loc(xl))
  do k = 1, 3
    call dg_inputf(c_loc(arr(k)))
  end do
  call check(dgad_get_index(xf) == idx(1), 'index xf')
  call check(dgad_get_index(xd) == idx(2), 'index xd')
  call check(dgad_get_index(xl) == idx(3), 'index xl')
  call check(all(dgad_get_index(arr) == [idx(4), idx(5), idx(6)]), 'index arr')

  ! Outputs: y is passive under the fake: block 7 = {0,0,1,0}; xd: 8.
  y = xd * xd
  call dg_outputf(c_loc(y))
  call dg_outputf(c_loc(xd))

  ! Dot values (forward mode).
  call dg_set_dotvalue(c_loc(xd), c_loc(dd), 8)
  got = -1
  call dg_get_dotvalue(c_loc(xd), c_loc(got), 8)
  call check(got == merge(0.25d0, -1d0, dot), 'dot xd')
  call valgrind_set_derivative(c_loc(y), c_loc(dd), 8)
  got = -1
  call valgrind_get_derivative(c_loc(y), c_loc(got), 8)
  call check(got == merge(0.25d0, -1d0, dot), 'derivative y')
  call check(dgad_get_dot(y) == merge(0.25d0, 0d0, dot), 'dgad_get_dot y')

  call dg_mark_float(c_loc(xd), 8)
  call dg_clearf()

  call check(xf == 1.5 .and. xd == 2.5d0 .and. xl == 3.5_10 .and. y == 6.25d0, 'values')
  call check(all(arr == [1d0, 2d0, 3d0]), 'array values')

  if (fails > 0) then
    write (*, '(a,i0,a)') 'test_dg: ', fails, ' failure(s)'
    error stop 1
  end if
  write (*, '(a,i0,a)') 'test_dg OK (mode ', ichar(mode), ')'

contains

  integer(dgad_index_kind) function idx(n)
    integer, intent(in) :: n
    idx = merge(int(n, dgad_index_kind), 0_dgad_index_kind, rec)
  end function idx

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write (*, '(2a)') 'CHECK failed: ', what
      fails = fails + 1
    end if
  end subroutine check

end program test_dg
