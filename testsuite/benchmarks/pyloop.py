"""Pure-Python numeric loop: the CPython benchmark of the engine (null mode)."""
import math
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
s = 0.0
x = 0.5
for i in range(n):
    x = x * 0.999 + 0.001 * (i % 7)
    s += math.sqrt(x) / (1.0 + x * x)
print(f"{s:.12f}")
