# math: libm functions over a grid of arguments, printed with repr so every
# bit of each result is compared, plus integer functions.
import math

funcs = [math.sin, math.cos, math.tan, math.exp, math.log1p, math.atan, math.sinh, math.erf, math.gamma, math.cbrt]
for i in range(-40, 41):
    x = i * 0.173
    row = []
    for f in funcs:
        try:
            row.append(repr(f(x)))
        except (ValueError, OverflowError) as e:
            row.append(type(e).__name__)
    print(repr(x), " ".join(row))
for x in [0.0, -0.0, 1e-310, 1e308, float("inf"), float("nan")]:
    print(repr(x), repr(math.sqrt(abs(x))), repr(math.log(x) if x > 0 else float("-inf")), math.frexp(x))
print("hypot:", repr(math.hypot(3e200, 4e200)), "fsum:", repr(math.fsum([0.1] * 10)), repr(sum([0.1] * 10)))
print("factorial(60):", math.factorial(60))
print("comb/perm:", math.comb(100, 37), math.perm(30, 10), math.gcd(2**64 - 1, 3**40), math.isqrt(10**50 + 12345))
print("pow/fmod:", repr(math.pow(2.0, 0.5)), repr(math.fmod(-7.5, 2.0)), repr(math.remainder(7.5, 2.0)))
print("END math_functions")
