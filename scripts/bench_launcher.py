#!/usr/bin/env python3
"""The launcher's cost: `dgad run -- PROG` (early injection: traced until
the loader's rendezvous, then detached) against plain
`LD_PRELOAD=libdgad.so DGAD_MODE=null PROG`, and `dgad run --no-early`
(the launcher without ptrace), measured in the same run.

Workloads:
  stencil   testsuite/programs/c/stencil.c (gcc -O3), the CPU-bound 2-D
            stencil of scripts/bench_null.py (1024 x 1024, 800 steps);
  true      /bin/true (start-up alone);
  python    python3 -c pass (start-up of an interpreter).

A second table: the stencil and an empty main linked -static, which dgad
runs inside dgad-static-host (decision 45), against their native runs.

The three ways alternate, the order rotating every round; the table gives
the median wall time of --repeat runs each and the ratios to plain
LD_PRELOAD. Every run must print what the native run prints.

Usage: scripts/bench_launcher.py [--repeat R] [--no-build]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "target/release"
LIB = RELEASE / "libdgad.so"
DGAD = RELEASE / "dgad"
OUT = ROOT / "target/bench/launcher"


def python_executable():
    """The interpreter itself, not a launcher script (pyenv's shim)."""
    return subprocess.run([sys.executable, "-c", "import sys; print(sys.executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()


def build(no_build):
    if not no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "preload", "-p", "launcher"],
                       cwd=ROOT, check=True)
    for tool in (LIB, DGAD):
        if not tool.is_file():
            sys.exit("bench_launcher.py: %s is missing (cargo build --release -p preload "
                     "-p launcher)" % tool)
    OUT.mkdir(parents=True, exist_ok=True)
    stencil = OUT / "stencil"
    stencil_static = OUT / "stencil-static"
    true_static = OUT / "true-static"
    source = str(ROOT / "testsuite/programs/c/stencil.c")
    subprocess.run(["gcc", "-O3", "-o", str(stencil), source, "-lm"], check=True)
    subprocess.run(["gcc", "-O3", "-static", "-o", str(stencil_static), source, "-lm"], check=True)
    subprocess.run(["gcc", "-O2", "-static", "-o", str(true_static), "-x", "c", "-"],
                   input=b"int main(void) { return 0; }\n", check=True)
    dynamic = {
        "stencil (1024², 800 steps)": [str(stencil)],
        "/bin/true": ["/bin/true"],
        "python3 -c pass": [python_executable(), "-c", "pass"],
    }
    static = {
        "stencil (1024², 800 steps), -static": [str(stencil_static)],
        "an empty main, -static": [str(true_static)],
    }
    return dynamic, static


def run(command, env):
    start = time.perf_counter()
    p = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit("bench_launcher.py: %s exited with %d:\n%s"
                 % (" ".join(command), p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    return seconds, p.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    workloads, static = build(args.no_build)
    base = {k: v for k, v in os.environ.items() if not k.startswith("DGAD_") and k != "LD_PRELOAD"}
    ways = {
        "LD_PRELOAD": lambda c: (c, dict(base, LD_PRELOAD=str(LIB), DGAD_MODE="null")),
        "dgad run": lambda c: ([str(DGAD), "run", "--"] + c, base),
        "dgad run --no-early": lambda c: ([str(DGAD), "run", "--no-early", "--"] + c, base),
    }
    print("| workload | native | LD_PRELOAD (null) | dgad run | ratio | "
          "dgad run --no-early | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, command in workloads.items():
        native_out = run(command, base)[1]
        times = {w: [] for w in ways}
        native = []
        order = list(ways)
        for w in order:  # warm-up
            run(*ways[w](command))
        for r in range(args.repeat):
            native.append(run(command, base)[0])
            for w in order[r % 3:] + order[:r % 3]:
                seconds, out = run(*ways[w](command))
                if out != native_out:
                    sys.exit("bench_launcher.py: %s under %s printed something else" % (name, w))
                times[w].append(seconds)
        med = {w: statistics.median(t) for w, t in times.items()}
        ms = lambda s: "%.1f ms" % (s * 1e3)
        ref = med["LD_PRELOAD"]
        print("| %s | %s | %s | %s | %.3fx | %s | %.3fx |" % (
            name, ms(statistics.median(native)), ms(ref), ms(med["dgad run"]),
            med["dgad run"] / ref, ms(med["dgad run --no-early"]),
            med["dgad run --no-early"] / ref))
    # Statically linked programs (decision 45): no LD_PRELOAD to compare
    # with; `dgad run` (the program inside dgad-static-host) against the
    # native run, alternating.
    print()
    print("| static workload | native | dgad run | ratio | difference |")
    print("|---|---|---|---|---|")
    for name, command in static.items():
        native_out = run(command, base)[1]
        under = [str(DGAD), "run", "--"] + command
        run(under, base)  # warm-up
        native, dgad = [], []
        for _ in range(args.repeat):
            native.append(run(command, base)[0])
            seconds, out = run(under, base)
            if out != native_out:
                sys.exit("bench_launcher.py: %s under dgad printed something else" % name)
            dgad.append(seconds)
        n, d = statistics.median(native), statistics.median(dgad)
        print("| %s | %.1f ms | %.1f ms | %.3fx | %+.1f ms |" % (name, n * 1e3, d * 1e3, d / n,
                                                              (d - n) * 1e3))


if __name__ == "__main__":
    main()
