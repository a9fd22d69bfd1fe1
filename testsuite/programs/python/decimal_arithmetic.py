# decimal: arbitrary-precision arithmetic in libmpdec: sqrt, exp, ln,
# division, quantize with several rounding modes and a series for pi.
from decimal import Decimal, getcontext, localcontext, ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_DOWN

getcontext().prec = 60
print("sqrt(2) =", Decimal(2).sqrt())
print("exp(1)  =", Decimal(1).exp())
print("ln(10)  =", Decimal(10).ln())
print("1/7     =", Decimal(1) / Decimal(7))


def pi_machin(digits):
    with localcontext() as ctx:
        ctx.prec = digits + 10

        def arctan_inv(x):
            x = Decimal(x)
            total = term = Decimal(1) / x
            n, sign, x2 = 1, 1, x * x
            while True:
                term /= x2
                n += 2
                sign = -sign
                delta = term / n
                if delta == 0 or abs(delta) < Decimal(10) ** -(digits + 5):
                    break
                total += sign * delta
            return total

        pi = 4 * (4 * arctan_inv(5) - arctan_inv(239))
    return +pi


print("pi      =", pi_machin(100))
for mode in [ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_DOWN]:
    print(mode, [str(Decimal(v).quantize(Decimal("0.1"), rounding=mode)) for v in ["1.25", "1.35", "-2.45", "0.05"]])
total = sum(Decimal("0.1") for _ in range(1000))
print("sum of 1000 x 0.1 =", total, "float:", repr(sum(0.1 for _ in range(1000))))
print("big power:", Decimal(3) ** 200)
print("END decimal_arithmetic")
