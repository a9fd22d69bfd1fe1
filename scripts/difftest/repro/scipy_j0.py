# scipy.special.j0 at 3.1 under dgad: expected -J1(3.1) = -0.30092113310105756,
# dgad gives -0.3524131389506075 (the derivative with cephes' P(z) held constant)
import dgad
import scipy.special as S
x = dgad.input(3.1)
dgad.output(S.j0(x))
