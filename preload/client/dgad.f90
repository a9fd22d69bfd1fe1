! dgad -- Fortran client API of dgad (automatic differentiation of compiled
! programs by dynamic binary translation).
!
!   use dgad
!   real(8) :: x(3), y
!   call dgad_input(x)        ! x(1), x(2), x(3) become AD inputs, in order
!   y = sum(x**2)
!   call dgad_output(y)       ! y becomes an AD output
!
! Under libdgad.so in recording mode the runtime records the tape and the
! index files; run natively, every procedure does nothing to the program's
! values and returns its default (mode achar(0), index 0, dot value 0).
!
! The generic procedures accept real(4), real(8) and real(10) variables,
! scalars or arrays of any rank (they are impure elemental, so arrays are
! processed element by element in array element order).  Pass variables,
! not expressions: an index or dot value belongs to the memory the variable
! occupies.  Indices are integer(dgad_index_kind) (64-bit; 0 = passive).
!
! Procedures (x, y: real(4|8|10) scalar or array; idx: integer(dgad_index_kind)):
!   call dgad_input(x [, index])    mark as input, index to the input file
!   call dgad_output(y [, index])   mark as output, index to the output file
!   idx = dgad_get_index(x)         index of x
!   call dgad_set_index(x, idx)     give x the index idx
!   idx = dgad_new_index(i1, i2, p1, p2, value)             new tape block
!   idx = dgad_new_index_noactivity(i1, i2, p1, p2, value)  (always a block)
!   call dgad_index_to_file(which, idx)   which = DGAD_INPUT_FILE | DGAD_OUTPUT_FILE
!   call dgad_disable() / call dgad_enable()   stop / resume recording (nestable)
!   prev = dgad_disable_adjust(plus, minus)    adjust the disable counter
!   c = dgad_mode()      'b' recording, 'd' forward mode, achar(0) natively
!   l = dgad_running()   .true. under dgad
!   call dgad_set_dot(x, dot)   set the dot value (forward mode)
!   d = dgad_get_dot(x)         get the dot value (forward mode)
!
! The bodies of the C side are in dgad_fortran_shim.c (libdgadclient.a).
! The code for the three real kinds below is identical up to the kind.

module dgad
  use, intrinsic :: iso_c_binding, only: c_float, c_double, c_long_double, &
       c_int, c_long, c_int64_t
  implicit none
  private

  integer, parameter, public :: dgad_index_kind = c_int64_t
  integer(c_int), parameter, public :: DGAD_INPUT_FILE = 0
  integer(c_int), parameter, public :: DGAD_OUTPUT_FILE = 1
  character(len=1), parameter, public :: DGAD_MODE_NATIVE = achar(0)
  character(len=1), parameter, public :: DGAD_MODE_DOT = 'd'
  character(len=1), parameter, public :: DGAD_MODE_RECORD = 'b'

  public :: dgad_input, dgad_output, dgad_get_index, dgad_set_index
  public :: dgad_new_index, dgad_new_index_noactivity, dgad_index_to_file
  public :: dgad_disable, dgad_enable, dgad_disable_adjust
  public :: dgad_mode, dgad_running
  public :: dgad_set_dot, dgad_get_dot

  interface dgad_input
     module procedure input_r4, input_r8, input_r10
  end interface dgad_input

  interface dgad_output
     module procedure output_r4, output_r8, output_r10
  end interface dgad_output

  interface dgad_get_index
     module procedure get_index_r4, get_index_r8, get_index_r10
  end interface dgad_get_index

  interface dgad_set_index
     module procedure set_index_r4, set_index_r8, set_index_r10
  end interface dgad_set_index

  interface dgad_set_dot
     module procedure set_dot_r4, set_dot_r8, set_dot_r10
  end interface dgad_set_dot

  interface dgad_get_dot
     module procedure get_dot_r4, get_dot_r8, get_dot_r10
  end interface dgad_get_dot

  ! ---- C side (dgad_fortran_shim.c) ----
  interface
    subroutine c_input_r4(x, index) bind(C, name="dgad_f_input_r4")
      import :: c_float, c_int64_t
      real(c_float), intent(inout) :: x
      integer(c_int64_t), intent(out) :: index
    end subroutine c_input_r4
    subroutine c_output_r4(y, index) bind(C, name="dgad_f_output_r4")
      import :: c_float, c_int64_t
      real(c_float), intent(in) :: y
      integer(c_int64_t), intent(out) :: index
    end subroutine c_output_r4
    function c_get_index_r4(x) result(index) bind(C, name="dgad_f_get_index_r4")
      import :: c_float, c_int64_t
      real(c_float), intent(in) :: x
      integer(c_int64_t) :: index
    end function c_get_index_r4
    subroutine c_set_index_r4(x, index) bind(C, name="dgad_f_set_index_r4")
      import :: c_float, c_int64_t
      real(c_float), intent(inout) :: x
      integer(c_int64_t), intent(in) :: index
    end subroutine c_set_index_r4
    subroutine c_set_dot_r4(x, dot) bind(C, name="dgad_f_set_dot_r4")
      import :: c_float
      real(c_float), intent(inout) :: x
      real(c_float), intent(in) :: dot
    end subroutine c_set_dot_r4
    function c_get_dot_r4(x) result(dot) bind(C, name="dgad_f_get_dot_r4")
      import :: c_float
      real(c_float), intent(in) :: x
      real(c_float) :: dot
    end function c_get_dot_r4
    subroutine c_input_r8(x, index) bind(C, name="dgad_f_input_r8")
      import :: c_double, c_int64_t
      real(c_double), intent(inout) :: x
      integer(c_int64_t), intent(out) :: index
    end subroutine c_input_r8
    subroutine c_output_r8(y, index) bind(C, name="dgad_f_output_r8")
      import :: c_double, c_int64_t
      real(c_double), intent(in) :: y
      integer(c_int64_t), intent(out) :: index
    end subroutine c_output_r8
    function c_get_index_r8(x) result(index) bind(C, name="dgad_f_get_index_r8")
      import :: c_double, c_int64_t
      real(c_double), intent(in) :: x
      integer(c_int64_t) :: index
    end function c_get_index_r8
    subroutine c_set_index_r8(x, index) bind(C, name="dgad_f_set_index_r8")
      import :: c_double, c_int64_t
      real(c_double), intent(inout) :: x
      integer(c_int64_t), intent(in) :: index
    end subroutine c_set_index_r8
    subroutine c_set_dot_r8(x, dot) bind(C, name="dgad_f_set_dot_r8")
      import :: c_double
      real(c_double), intent(inout) :: x
      real(c_double), intent(in) :: dot
    end subroutine c_set_dot_r8
    function c_get_dot_r8(x) result(dot) bind(C, name="dgad_f_get_dot_r8")
      import :: c_double
      real(c_double), intent(in) :: x
      real(c_double) :: dot
    end function c_get_dot_r8
    subroutine c_input_r10(x, index) bind(C, name="dgad_f_input_r10")
      import :: c_long_double, c_int64_t
      real(c_long_double), intent(inout) :: x
      integer(c_int64_t), intent(out) :: index
    end subroutine c_input_r10
    subroutine c_output_r10(y, index) bind(C, name="dgad_f_output_r10")
      import :: c_long_double, c_int64_t
      real(c_long_double), intent(in) :: y
      integer(c_int64_t), intent(out) :: index
    end subroutine c_output_r10
    function c_get_index_r10(x) result(index) bind(C, name="dgad_f_get_index_r10")
      import :: c_long_double, c_int64_t
      real(c_long_double), intent(in) :: x
      integer(c_int64_t) :: index
    end function c_get_index_r10
    subroutine c_set_index_r10(x, index) bind(C, name="dgad_f_set_index_r10")
      import :: c_long_double, c_int64_t
      real(c_long_double), intent(inout) :: x
      integer(c_int64_t), intent(in) :: index
    end subroutine c_set_index_r10
    subroutine c_set_dot_r10(x, dot) bind(C, name="dgad_f_set_dot_r10")
      import :: c_long_double
      real(c_long_double), intent(inout) :: x
      real(c_long_double), intent(in) :: dot
    end subroutine c_set_dot_r10
    function c_get_dot_r10(x) result(dot) bind(C, name="dgad_f_get_dot_r10")
      import :: c_long_double
      real(c_long_double), intent(in) :: x
      real(c_long_double) :: dot
    end function c_get_dot_r10
    function c_mode() result(mode) bind(C, name="dgad_f_mode")
      import :: c_int
      integer(c_int) :: mode
    end function c_mode
    function c_disable_adjust(plus, minus) result(prev) bind(C, name="dgad_f_disable_adjust")
      import :: c_long
      integer(c_long), intent(in) :: plus, minus
      integer(c_long) :: prev
    end function c_disable_adjust
    function c_new_index(i1, i2, p1, p2, value) result(index) bind(C, name="dgad_f_new_index")
      import :: c_int64_t, c_double
      integer(c_int64_t), intent(in) :: i1, i2
      real(c_double), intent(in) :: p1, p2, value
      integer(c_int64_t) :: index
    end function c_new_index
    function c_new_index_noactivity(i1, i2, p1, p2, value) result(index) &
         bind(C, name="dgad_f_new_index_noactivity")
      import :: c_int64_t, c_double
      integer(c_int64_t), intent(in) :: i1, i2
      real(c_double), intent(in) :: p1, p2, value
      integer(c_int64_t) :: index
    end function c_new_index_noactivity
    subroutine c_index_to_file(which, index) bind(C, name="dgad_f_index_to_file")
      import :: c_int, c_int64_t
      integer(c_int), intent(in) :: which
      integer(c_int64_t), intent(in) :: index
    end subroutine c_index_to_file
  end interface

contains

  ! ---- Mode and disabling ----------------------------------------------

  ! 'b' when recording, 'd' in forward mode, achar(0) natively.
  function dgad_mode() result(mode)
    character(len=1) :: mode
    mode = achar(c_mode())
  end function dgad_mode

  ! .true. when running under dgad (or Derivgrind).
  logical function dgad_running()
    dgad_running = c_mode() /= 0
  end function dgad_running

  ! Add plus to and subtract minus from the disable counter; returns its
  ! previous value (0 natively).
  function dgad_disable_adjust(plus, minus) result(prev)
    integer, intent(in) :: plus, minus
    integer(c_long) :: prev
    prev = c_disable_adjust(int(plus, c_long), int(minus, c_long))
  end function dgad_disable_adjust

  ! Stop recording: results are passive and no blocks are written until the
  ! matching dgad_enable.  Nestable.
  subroutine dgad_disable()
    integer(c_long) :: prev
    prev = c_disable_adjust(1_c_long, 0_c_long)
  end subroutine dgad_disable

  subroutine dgad_enable()
    integer(c_long) :: prev
    prev = c_disable_adjust(0_c_long, 1_c_long)
  end subroutine dgad_enable

  ! ---- Tape blocks and index files -------------------------------------

  ! New tape block for a result with operand indices i1, i2 and partial
  ! derivatives p1, p2 (value: the result's value, diagnostics only).  With
  ! activity analysis: 0 and no block if i1 = i2 = 0.  Returns the index.
  function dgad_new_index(i1, i2, p1, p2, value) result(index)
    integer(dgad_index_kind), intent(in) :: i1, i2
    real(c_double), intent(in) :: p1, p2, value
    integer(dgad_index_kind) :: index
    index = c_new_index(i1, i2, p1, p2, value)
  end function dgad_new_index

  ! As dgad_new_index, but always writes a block (non-zero index).
  function dgad_new_index_noactivity(i1, i2, p1, p2, value) result(index)
    integer(dgad_index_kind), intent(in) :: i1, i2
    real(c_double), intent(in) :: p1, p2, value
    integer(dgad_index_kind) :: index
    index = c_new_index_noactivity(i1, i2, p1, p2, value)
  end function dgad_new_index_noactivity

  ! Append index to the input (DGAD_INPUT_FILE) or output (DGAD_OUTPUT_FILE)
  ! index file.
  subroutine dgad_index_to_file(which, index)
    integer(c_int), intent(in) :: which
    integer(dgad_index_kind), intent(in) :: index
    call c_index_to_file(which, index)
  end subroutine dgad_index_to_file

  ! ---- real(c_float) ----

  ! Mark x as AD input (new block without operands, its index attached to x
  ! and appended to the input index file).  x is not changed.
  impure elemental subroutine input_r4(x, index)
    real(c_float), intent(inout) :: x
    integer(dgad_index_kind), intent(out), optional :: index
    integer(c_int64_t) :: i
    call c_input_r4(x, i)
    if (present(index)) index = i
  end subroutine input_r4

  ! Mark y as AD output (new block with y's index as operand, partial 1,
  ! its index appended to the output index file).
  impure elemental subroutine output_r4(y, index)
    real(c_float), intent(in) :: y
    integer(dgad_index_kind), intent(out), optional :: index
    integer(c_int64_t) :: i
    call c_output_r4(y, i)
    if (present(index)) index = i
  end subroutine output_r4

  ! Index of x (0 if passive, 0 natively).
  impure elemental function get_index_r4(x) result(index)
    real(c_float), intent(in) :: x
    integer(dgad_index_kind) :: index
    index = c_get_index_r4(x)
  end function get_index_r4

  ! Give x the index `index`.
  impure elemental subroutine set_index_r4(x, index)
    real(c_float), intent(inout) :: x
    integer(dgad_index_kind), intent(in) :: index
    call c_set_index_r4(x, index)
  end subroutine set_index_r4

  ! Set the dot value of x (forward mode).
  impure elemental subroutine set_dot_r4(x, dot)
    real(c_float), intent(inout) :: x
    real(c_float), intent(in) :: dot
    call c_set_dot_r4(x, dot)
  end subroutine set_dot_r4

  ! Dot value of x (forward mode; 0 otherwise and natively).
  impure elemental function get_dot_r4(x) result(dot)
    real(c_float), intent(in) :: x
    real(c_float) :: dot
    dot = c_get_dot_r4(x)
  end function get_dot_r4

  ! ---- real(c_double) ----

  ! Mark x as AD input (new block without operands, its index attached to x
  ! and appended to the input index file).  x is not changed.
  impure elemental subroutine input_r8(x, index)
    real(c_double), intent(inout) :: x
    integer(dgad_index_kind), intent(out), optional :: index
    integer(c_int64_t) :: i
    call c_input_r8(x, i)
    if (present(index)) index = i
  end subroutine input_r8

  ! Mark y as AD output (new block with y's index as operand, partial 1,
  ! its index appended to the output index file).
  impure elemental subroutine output_r8(y, index)
    real(c_double), intent(in) :: y
    integer(dgad_index_kind), intent(out), optional :: index
    integer(c_int64_t) :: i
    call c_output_r8(y, i)
    if (present(index)) index = i
  end subroutine output_r8

  ! Index of x (0 if passive, 0 natively).
  impure elemental function get_index_r8(x) result(index)
    real(c_double), intent(in) :: x
    integer(dgad_index_kind) :: index
    index = c_get_index_r8(x)
  end function get_index_r8

  ! Give x the index `index`.
  impure elemental subroutine set_index_r8(x, index)
    real(c_double), intent(inout) :: x
    integer(dgad_index_kind), intent(in) :: index
    call c_set_index_r8(x, index)
  end subroutine set_index_r8

  ! Set the dot value of x (forward mode).
  impure elemental subroutine set_dot_r8(x, dot)
    real(c_double), intent(inout) :: x
    real(c_double), intent(in) :: dot
    call c_set_dot_r8(x, dot)
  end subroutine set_dot_r8

  ! Dot value of x (forward mode; 0 otherwise and natively).
  impure elemental function get_dot_r8(x) result(dot)
    real(c_double), intent(in) :: x
    real(c_double) :: dot
    dot = c_get_dot_r8(x)
  end function get_dot_r8

  ! ---- real(c_long_double) ----

  ! Mark x as AD input (new block without operands, its index attached to x
  ! and appended to the input index file).  x is not changed.
  impure elemental subroutine input_r10(x, index)
    real(c_long_double), intent(inout) :: x
    integer(dgad_index_kind), intent(out), optional :: index
    integer(c_int64_t) :: i
    call c_input_r10(x, i)
    if (present(index)) index = i
  end subroutine input_r10

  ! Mark y as AD output (new block with y's index as operand, partial 1,
  ! its index appended to the output index file).
  impure elemental subroutine output_r10(y, index)
    real(c_long_double), intent(in) :: y
    integer(dgad_index_kind), intent(out), optional :: index
    integer(c_int64_t) :: i
    call c_output_r10(y, i)
    if (present(index)) index = i
  end subroutine output_r10

  ! Index of x (0 if passive, 0 natively).
  impure elemental function get_index_r10(x) result(index)
    real(c_long_double), intent(in) :: x
    integer(dgad_index_kind) :: index
    index = c_get_index_r10(x)
  end function get_index_r10

  ! Give x the index `index`.
  impure elemental subroutine set_index_r10(x, index)
    real(c_long_double), intent(inout) :: x
    integer(dgad_index_kind), intent(in) :: index
    call c_set_index_r10(x, index)
  end subroutine set_index_r10

  ! Set the dot value of x (forward mode).
  impure elemental subroutine set_dot_r10(x, dot)
    real(c_long_double), intent(inout) :: x
    real(c_long_double), intent(in) :: dot
    call c_set_dot_r10(x, dot)
  end subroutine set_dot_r10

  ! Dot value of x (forward mode; 0 otherwise and natively).
  impure elemental function get_dot_r10(x) result(dot)
    real(c_long_double), intent(in) :: x
    real(c_long_double) :: dot
    dot = c_get_dot_r10(x)
  end function get_dot_r10

end module dgad
