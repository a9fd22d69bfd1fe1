! Uses every procedure of module dgad, for real(4), real(8), real(10),
! scalars and arrays.  Natively nothing may change; under tests/fakegrind the
! answers must arrive, and selftest.sh compares the files written under
! fakegrind -m b with expected/fdgad.*.
program test_dgad
  use dgad
  implicit none
  real(4) :: xf = 1.5
  real(8) :: xd = 2.5d0, y
  real(10) :: xl = 3.5_10
  real(8) :: a(2, 3)
  real(4) :: fa(2) = [7.0, 8.0]
  integer(dgad_index_kind) :: i, iv(3)
  character :: mode
  logical :: rec, dot, native
  integer :: fails = 0

  a = reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0], [2, 3])
  mode = dgad_mode()
  rec = mode == DGAD_MODE_RECORD
  dot = mode == DGAD_MODE_DOT
  native = mode == DGAD_MODE_NATIVE
  call check(rec .or. dot .or. native, 'mode')
  call check(dgad_running() .eqv. .not. native, 'running')

  ! Scalars: 1, 2, 3 (with the optional index argument).
  call dgad_input(xf, i)
  call check(i == idx(1), 'input xf')
  call dgad_input(xd)
  call dgad_input(xl, index=i)
  call check(i == idx(3), 'input xl')
  call check(dgad_get_index(xd) == idx(2), 'index xd')
  ! Arrays in array element order: a(1,1), a(2,1), ... = 4..9; fa = 10, 11.
  call dgad_input(a)
  call dgad_input(fa)
  call check(dgad_get_index(a(1, 1)) == idx(4), 'a(1,1)')
  call check(dgad_get_index(a(2, 1)) == idx(5), 'a(2,1)')
  call check(dgad_get_index(a(2, 3)) == idx(9), 'a(2,3)')
  call check(all(dgad_get_index(fa) == [idx(10), idx(11)]), 'fa')
  ! Array section, non-contiguous: a(1,2), a(1,3) get 12, 13.
  call dgad_input(a(1, 2:3), iv(1:2))
  call check(all(iv(1:2) == [idx(12), idx(13)]), 'section indices')
  call check(dgad_get_index(a(1, 3)) == idx(13), 'a(1,3)')

  ! Outputs: y passive under the fake: 14 = {0,0,1,0}; xd: 15 = {2,0,1,0};
  ! a(:,1): 16 = {4,..}, 17 = {5,..}; xl: 18 = {3,..}; fa(2): 19 = {11,..}.
  y = xd * xd
  call dgad_output(y, i)
  call check(i == idx(14), 'output y')
  call dgad_output(xd)
  call dgad_output(a(:, 1))
  call dgad_output(xl)
  call dgad_output(fa(2))

  ! Indices and blocks.
  call dgad_set_index(y, 7_dgad_index_kind)
  call check(dgad_get_index(y) == idx(7), 'set_index')
  i = dgad_new_index(0_dgad_index_kind, 0_dgad_index_kind, 1d0, 0d0, 4d0)
  call check(i == 0, 'new_index passive')
  i = dgad_new_index(2_dgad_index_kind, 3_dgad_index_kind, 0.5d0, 0.25d0, 4d0) ! 20
  call check(i == idx(20), 'new_index')
  i = dgad_new_index_noactivity(0_dgad_index_kind, 0_dgad_index_kind, 0d0, 0d0, 1d0) ! 21
  call check(i == idx(21), 'new_index_noactivity')
  call dgad_index_to_file(DGAD_OUTPUT_FILE, i)
  call dgad_index_to_file(DGAD_INPUT_FILE, 2_dgad_index_kind)

  ! Disabling.
  call check(dgad_disable_adjust(0, 0) == 0, 'disable 0')
  call dgad_disable()
  call dgad_disable()
  call check(dgad_disable_adjust(0, 0) == merge(0, 2, native), 'disable 2')
  call dgad_enable()
  call dgad_enable()
  call check(dgad_disable_adjust(0, 0) == 0, 'enable')

  ! Dot values.
  call dgad_set_dot(xd, 0.25d0)
  call dgad_set_dot(xf, 0.5)
  call dgad_set_dot(xl, 0.125_10)
  call dgad_set_dot(a(2, :), [1d0, 2d0, 3d0])
  call check(dgad_get_dot(xd) == merge(0.25d0, 0d0, dot), 'dot xd')
  call check(dgad_get_dot(xf) == merge(0.5, 0.0, dot), 'dot xf')
  call check(dgad_get_dot(xl) == merge(0.125_10, 0.0_10, dot), 'dot xl')
  call check(all(dgad_get_dot(a(2, :)) == merge([1d0, 2d0, 3d0], [0d0, 0d0, 0d0], dot)), 'dot a')

  call check(xf == 1.5 .and. xd == 2.5d0 .and. xl == 3.5_10 .and. y == 6.25d0, 'values')
  call check(all(a == reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0], [2, 3])), 'a values')
  call check(all(fa == [7.0, 8.0]), 'fa values')

  if (fails > 0) then
    write (*, '(a,i0,a)') 'test_dgad: ', fails, ' failure(s)'
    error stop 1
  end if
  write (*, '(a,i0,a)') 'test_dgad (Fortran) OK (mode ', ichar(mode), ')'

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

end program test_dgad
