! derivgrind_clientrequests -- Derivgrind's Fortran client-request module,
! offered by dgad under the same module name, procedure names and
! signatures, so that Fortran programs written for Derivgrind compile
! unchanged:
!
!   use derivgrind_clientrequests
!   real(8), target :: x, y, xd
!   call dg_inputf(c_loc(x))                       ! recording mode
!   call dg_outputf(c_loc(y))
!   call dg_set_dotvalue(c_loc(x), c_loc(xd), 8)   ! forward mode
!   call dg_get_dotvalue(c_loc(y), c_loc(xd), 8)
!
! Variables are passed as c_loc pointers (so they need the TARGET
! attribute); any real kind works (4, 8, 10), as an index is attached to the
! variable's address.  size_ is the variable's size in bytes.  Run natively,
! every call does nothing.
!
! The bodies are in dgad_fortran_shim.c (libdgadclient.a).  The module also
! makes iso_c_binding available, as Derivgrind's does.

module derivgrind_clientrequests
  use, intrinsic :: iso_c_binding
  implicit none

  ! ---- Forward mode ----------------------------------------------------
  interface
    ! Set the dot value of the variable at val from the variable at dotval.
    subroutine dg_set_dotvalue(val, dotval, size_) bind(C, name="dg_set_dotvalue")
      import :: c_ptr, c_int
      type(c_ptr) :: val
      type(c_ptr) :: dotval
      integer(kind=c_int), intent(in) :: size_
    end subroutine dg_set_dotvalue

    ! Copy the dot value of the variable at val to the variable at dotval.
    subroutine dg_get_dotvalue(val, dotval, size_) bind(C, name="dg_get_dotvalue")
      import :: c_ptr, c_int
      type(c_ptr) :: val
      type(c_ptr) :: dotval
      integer(kind=c_int), intent(in) :: size_
    end subroutine dg_get_dotvalue

    ! Names of Derivgrind's first release, same as dg_set/get_dotvalue.
    subroutine valgrind_set_derivative(val, dotval, size_) bind(C, name="valgrind_set_derivative")
      import :: c_ptr, c_int
      type(c_ptr) :: val
      type(c_ptr) :: dotval
      integer(kind=c_int), intent(in) :: size_
    end subroutine valgrind_set_derivative

    subroutine valgrind_get_derivative(val, dotval, size_) bind(C, name="valgrind_get_derivative")
      import :: c_ptr, c_int
      type(c_ptr) :: val
      type(c_ptr) :: dotval
      integer(kind=c_int), intent(in) :: size_
    end subroutine valgrind_get_derivative
  end interface

  ! ---- Recording mode --------------------------------------------------
  interface
    ! Mark the variable at val as AD input; its index goes to the input
    ! index file.
    subroutine dg_inputf(val) bind(C, name="dg_inputf")
      import :: c_ptr
      type(c_ptr) :: val
    end subroutine dg_inputf

    ! Mark the variable at val as AD output; its index goes to the output
    ! index file.
    subroutine dg_outputf(val) bind(C, name="dg_outputf")
      import :: c_ptr
      type(c_ptr) :: val
    end subroutine dg_outputf

    ! Early Derivgrind: truncate the index files.  Does nothing now (the
    ! runtime creates the files when recording starts).
    subroutine dg_clearf() bind(C, name="dg_clearf")
    end subroutine dg_clearf
  end interface

  ! ---- Bit-trick finder (Derivgrind's --trick mode; ignored by dgad) -----
  interface
    subroutine dg_mark_float(val, size_) bind(C, name="dg_mark_float")
      import :: c_ptr, c_int
      type(c_ptr) :: val
      integer(kind=c_int), intent(in) :: size_
    end subroutine dg_mark_float
  end interface

end module derivgrind_clientrequests
