#!/usr/bin/env python3
"""Derivatives of glibc's sin and log as dgad records them, with and without
the libm wrappers (issue #4), against the analytic derivatives cos x and 1/x.

Records testsuite/benchmarks/libm_sweep.c (every x an AD input, every f(x)
an AD output) twice, with the wrappers (DGAD_MATHWRAP unset) and without
(DGAD_MATHWRAP=0), runs one reverse sweep with every output bar 1 (input
bar i = f'(x_i)), prints the largest relative error |dgad - analytic| /
|analytic| of each curve and plots everything into docs/libm-derivatives.png.

Without wrappers dgad differentiates glibc's machine code, whose table
lookups and round-by-adding-a-big-constant tricks make the derivative wrong
(zero) outside small intervals (forward-mode Derivgrind paper, section 5).

Needs matplotlib: `pip install matplotlib` (or `apt-get install python3-matplotlib`).
Usage: scripts/plot_libm.py [--points N] [--out PNG]
"""
import argparse
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_libm.py needs matplotlib: pip install matplotlib  (or apt-get install python3-matplotlib)")

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "target/release/libdgad.so"
EVAL = ROOT / "target/release/dg-eval"
OUT = ROOT / "target/bench"

ANALYTIC = {"sin": (math.cos, "cos x"), "log": (lambda x: 1.0 / x, "1/x")}
# Relative errors are drawn on a log scale; exact values are drawn at this floor.
ERROR_FLOOR = 1e-18
# A point counts as correct below this relative error (for the printed intervals).
CORRECT = 1e-8
# The x ranges of figure 1 in the paper.
ZOOM = {"sin": (-1.0, 1.0), "log": (0.8, 1.4)}
RUNS = [
    ("with wrappers", None, dict(color="tab:blue", linestyle="none", marker="o", markersize=4, alpha=0.5)),
    ("without wrappers (DGAD_MATHWRAP=0)", "0", dict(color="tab:red", linestyle="none", marker=".", markersize=2.5)),
]


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("DGAD_") and k != "LD_PRELOAD"}


def parse_points(stdout):
    """[(function, x, y)] from libm_sweep's output."""
    points = []
    for line in stdout.splitlines():
        name, x, y = line.split()
        points.append((name, float(x), float(y)))
    return points


def record(program, points, mathwrap, workdir):
    """Records one run and returns (its stdout points, [f'(x_i)] from one reverse sweep)."""
    rec = workdir / f"mathwrap-{mathwrap or 'default'}"
    env = dict(clean_env(), LD_PRELOAD=str(LIB), DGAD_RECORD=str(rec))
    if mathwrap is not None:
        env["DGAD_MATHWRAP"] = mathwrap
    run = subprocess.run([str(program), str(points)], env=env, check=True, capture_output=True, text=True)
    for line in run.stderr.splitlines():
        print(f"  [DGAD_MATHWRAP={mathwrap or 'unset'}] {line}")
    values = parse_points(run.stdout)
    (rec / "dg-output-bars").write_text("1\n" * len(values))
    subprocess.run([str(EVAL), str(rec)], check=True)
    bars = [float(v) for v in (rec / "dg-input-bars").read_text().split()]
    if len(bars) != len(values):
        sys.exit(f"dg-eval wrote {len(bars)} input bars for {len(values)} inputs")
    return values, bars


def relative_error(d, exact):
    return abs(d - exact) / abs(exact) if exact != 0 else abs(d)


def correct_intervals(xs, errors):
    """Maximal runs of consecutive grid points with a relative error below CORRECT."""
    runs, start = [], None
    for i, e in enumerate(errors):
        if e < CORRECT and start is None:
            start = i
        if (e >= CORRECT or i == len(errors) - 1) and start is not None:
            end = i if e < CORRECT else i - 1
            runs.append((xs[start], xs[end]))
            start = None
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=2000, help="points per function (default 2000)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs/libm-derivatives.png")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "preload", "-p", "evaluator"], cwd=ROOT, check=True)
    OUT.mkdir(parents=True, exist_ok=True)
    program = OUT / "libm_sweep"
    subprocess.run(["gcc", "-O2", "-I", ROOT / "include", "-o", program,
                    ROOT / "testsuite/benchmarks/libm_sweep.c", "-lm"], check=True)
    native = parse_points(subprocess.run([str(program), str(args.points)], env=clean_env(), check=True,
                                         capture_output=True, text=True).stdout)

    workdir = Path(tempfile.mkdtemp(prefix="dgad-libm-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    try:
        derivatives = {}
        for label, mathwrap, _ in RUNS:
            values, bars = record(program, args.points, mathwrap, workdir)
            if values != native:
                print(f"WARNING: the {label} run printed other values of sin/log than the native run")
            derivatives[label] = bars
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    glibc = platform.libc_ver()[1]
    fig, axes = plt.subplots(3, 2, figsize=(12, 11), gridspec_kw=dict(height_ratios=[3, 2, 2]))
    print(f"max relative error |dgad - analytic| / |analytic| over {args.points} points (glibc {glibc}):")
    for col, name in enumerate(ANALYTIC):
        f_prime, formula = ANALYTIC[name]
        idx = [i for i, (n, _, _) in enumerate(native) if n == name]
        xs = [native[i][1] for i in idx]
        exact = [f_prime(x) for x in xs]
        full, zoom, error = (axes[row][col] for row in range(3))
        for ax in (full, zoom):
            ax.plot(xs, exact, color="black", linewidth=1, label="analytic derivative (cos x, 1/x)", zorder=3)
        for label, _, style in RUNS:
            d = [derivatives[label][i] for i in idx]
            errors = [relative_error(a, b) for a, b in zip(d, exact)]
            worst = max(range(len(errors)), key=errors.__getitem__)
            intervals = ", ".join(f"[{a:.4g}, {b:.4g}]" for a, b in correct_intervals(xs, errors)) or "none"
            print(f"  {name:3}  {label:36} {errors[worst]:.3g} (at x = {xs[worst]:.6g}); "
                  f"relative error < {CORRECT:g} on {intervals}")
            for ax in (full, zoom):
                ax.plot(xs, d, label=f"dgad, {label}", **style)
            error.plot(xs, [max(e, ERROR_FLOOR) for e in errors], **style)
        full.set_title(f"d/dx {name}(x) = {formula}, glibc {glibc}")
        zoom_range = ZOOM[name]
        zoom.set_xlim(*zoom_range)
        zoom.set_title(f"zoom: {zoom_range[0]} ≤ x ≤ {zoom_range[1]} (the range of the paper's figure 1)", fontsize=9)
        error.set_yscale("log")
        error.set_ylim(ERROR_FLOOR / 3, 1e3)
        error.set_ylabel(f"|dgad − {formula}| / |{formula}|")
        error.set_title(f"relative error (exact values drawn at {ERROR_FLOOR:g})", fontsize=9)
        error.set_xlabel("x")
        for ax in (full, zoom, error):
            ax.grid(alpha=0.3)
    axes[0][1].set_ylim(-0.25, 3)  # 1/x reaches 1/x_min near 0
    axes[1][0].set_ylim(-0.1, 1.2)
    axes[1][1].set_ylim(-0.1, 1.4)
    if derivatives[RUNS[0][0]] == derivatives[RUNS[1][0]]:
        print("note: the runs with and without wrappers gave identical derivatives (no libm wrappers active)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3, bbox_to_anchor=(0.5, 0.945), fontsize=9, markerscale=3)
    fig.suptitle("dgad's derivatives of glibc's sin and log. Without wrappers, dgad differentiates glibc's machine "
                 "code, whose table lookups\nand round-by-adding-a-big-constant tricks make the derivative zero "
                 "outside small intervals (forward-mode Derivgrind paper, section 5).", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
