! Internal procedures that use their host's variables, passed as actual
! arguments: gfortran builds a trampoline for each on the (executable)
! stack, the two at the same address in turn (at -O0; -O3 inlines them).
! Each call must run the current one. External procedures only, so that
! parallel builds share no module file.
function apply(f, x) result(y)
  implicit none
  interface
    function f(v) result(w)
      real(8), intent(in) :: v
      real(8) :: w
    end function f
  end interface
  real(8), intent(in) :: x
  real(8) :: y
  y = f(x)
end function apply

function run_add(k, x) result(r)
  implicit none
  real(8), intent(in) :: k, x
  real(8) :: r
  interface
    function apply(f, x) result(y)
      interface
        function f(v) result(w)
          real(8), intent(in) :: v
          real(8) :: w
        end function f
      end interface
      real(8), intent(in) :: x
      real(8) :: y
    end function apply
  end interface
  r = apply(add, x)
contains
  function add(v) result(w)
    real(8), intent(in) :: v
    real(8) :: w
    w = v + k
  end function add
end function run_add

function run_mul(k, x) result(r)
  implicit none
  real(8), intent(in) :: k, x
  real(8) :: r
  interface
    function apply(f, x) result(y)
      interface
        function f(v) result(w)
          real(8), intent(in) :: v
          real(8) :: w
        end function f
      end interface
      real(8), intent(in) :: x
      real(8) :: y
    end function apply
  end interface
  r = apply(mul, x)
contains
  function mul(v) result(w)
    real(8), intent(in) :: v
    real(8) :: w
    w = v * k
  end function mul
end function run_mul

program internal_procedures
  implicit none
  real(8), external :: run_add, run_mul
  integer :: i
  do i = 1, 3
    print '(a,f8.3,a,f8.3)', 'add ', run_add(10d0, dble(i)), '  mul ', run_mul(10d0, dble(i))
  end do
  print '(a)', 'END internal_procedures'
end program internal_procedures
