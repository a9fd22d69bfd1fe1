#!/usr/bin/env python3
"""Gradient benchmark (issue 18): what a gradient costs under dgad on the
three workloads, against the native run, measured in the same invocation.

For each workload, alternating runs (the order rotating every round):

  native       the program without dgad;
  record       record mode, the tape on tmpfs (/dev/shm): recording alone;
  record+eval  the same, then `dg-eval` sweeps the tape (seed 1): the
               gradient through a tape file;
  compact      record mode with DGAD_TAPE_FORMAT=compact (dg-tape-compact
               on tmpfs);
  compact+eval the same, then `dg-eval` sweeps it;
  grad         `DGAD_GRAD=ones`: the tape kept in the process's memory and
               swept there at exit, only `dg-input-bars` written.

Every gradient run must give the same `dg-input-bars` bits as record+eval.
Also reported: tape bytes per cell update (interior cells times steps) in
both formats and the peak RSS of the grad runs.

Workloads (default sizes as issue 18 names them):
  burgers   testsuite/benchmarks/burgers.cpp (g++ -O3), 100 x 100, 100 steps;
  stencil   testsuite/benchmarks/record_kernel.c (gcc -O3, vectorised),
            384 x 384, 60 steps;
  python    testsuite/benchmarks/burgers.py, 32 x 32, 40 steps (the whole
            python3 process).

Usage: scripts/bench_grad.py [--repeat R] [--only NAME,...] [--no-build] [--no-write]
Writes its table into docs/performance.md between the bench-grad markers
(`--no-write`: only prints it, for a host too busy to replace the figures
there).
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfdoc  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "target/release"
LIB = RELEASE / "libdgad.so"
EVAL = RELEASE / "dg-eval"

SIZES = {"burgers": (100, 100), "stencil": (384, 60), "python": (32, 40)}


def build(no_build):
    """The workloads' commands (built as `scripts/bench_dot.py` builds them;
    burgers.py's `--time` only adds a line on stderr)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_dot  # noqa: E402
    return bench_dot.build(no_build)


def base_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DGAD_") and k != "LD_PRELOAD"}
    env["PYTHONPATH"] = str(ROOT / "python")
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(cmd, env, time_file=None):
    """Wall seconds of one run (and its peak RSS in KiB with time_file)."""
    prefix = ["/usr/bin/time", "-f", "%M", "-o", time_file] if time_file else []
    start = time.perf_counter()
    subprocess.run(prefix + cmd, env=env, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    rss = int(Path(time_file).read_text().split()[-1]) if time_file else 0
    return seconds, rss


def measure(name, cmd, repeat, shm):
    native_env = base_env()
    rec_dir, grad_dir = shm / (name + "-rec"), shm / (name + "-grad")
    compact_dir = shm / (name + "-compact")
    rec_env = dict(native_env, LD_PRELOAD=str(LIB), DGAD_RECORD=str(rec_dir))
    grad_env = dict(rec_env, DGAD_RECORD=str(grad_dir), DGAD_GRAD="ones")
    compact_env = dict(rec_env, DGAD_RECORD=str(compact_dir), DGAD_TAPE_FORMAT="compact")
    rss_file = str(shm / "rss")

    def clean():
        for d in (rec_dir, grad_dir, compact_dir):
            shutil.rmtree(d, ignore_errors=True)

    def native():
        return run(cmd, native_env)[0]

    def record():
        clean()
        return run(cmd, rec_env)[0]

    def record_eval(env=rec_env, directory=rec_dir):
        clean()
        seconds = run(cmd, env)[0]
        (directory / "dg-output-bars").write_text("1\n")
        start = time.perf_counter()
        subprocess.run([str(EVAL), str(directory)], check=True, stdout=subprocess.DEVNULL)
        return seconds + time.perf_counter() - start

    def compact():
        clean()
        return run(cmd, compact_env)[0]

    def compact_eval():
        return record_eval(compact_env, compact_dir)

    rss = []

    def grad():
        clean()
        seconds, kib = run(cmd, grad_env, rss_file)
        rss.append(kib)
        return seconds

    kinds = {"native": native, "record": record, "record+eval": record_eval,
             "compact": compact, "compact+eval": compact_eval, "grad": grad}
    times = {k: [] for k in kinds}
    order = list(kinds)
    for k in order:  # warm-up
        kinds[k]()
    for r in range(repeat):
        for k in order[r % len(order):] + order[:r % len(order)]:
            times[k].append(kinds[k]())
    # The same gradient both ways, and the tape's size.
    clean()
    run(cmd, rec_env)
    tape_bytes = (rec_dir / "dg-tape").stat().st_size
    (rec_dir / "dg-output-bars").write_text("1\n")
    subprocess.run([str(EVAL), str(rec_dir)], check=True, stdout=subprocess.DEVNULL)
    run(cmd, grad_env)
    run(cmd, compact_env)
    compact_bytes = (compact_dir / "dg-tape-compact").stat().st_size
    (compact_dir / "dg-output-bars").write_text("1\n")
    subprocess.run([str(EVAL), str(compact_dir)], check=True, stdout=subprocess.DEVNULL)
    reference = (rec_dir / "dg-input-bars").read_bytes()
    same = all((d / "dg-input-bars").read_bytes() == reference for d in (grad_dir, compact_dir))
    clean()
    medians = {k: statistics.median(v) for k, v in times.items()}
    return medians, (tape_bytes, compact_bytes), same, max(rss) if rss else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default=",".join(SIZES))
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--no-write", action="store_true",
                        help="print the table without writing it into docs/performance.md")
    args = parser.parse_args()
    commands = build(args.no_build)
    shm = Path(tempfile.mkdtemp(prefix="dgad-bench-grad-",
                                dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    rows, problems = [], []
    try:
        for name in args.only.split(","):
            n, steps = SIZES[name]
            medians, tape, same, rss = measure(name, commands[name](n, steps), args.repeat, shm)
            if not same:
                problems.append("%s: the compact tape's or DGAD_GRAD's dg-input-bars differ from "
                                "dg-eval's on dg-tape" % name)
            cells = (n - 2) ** 2 * steps
            rows.append((name, n, steps, medians, tape, cells, rss))
            print(name, {k: "%.1f ms" % (v * 1000) for k, v in medians.items()},
                  "tape %d B, %.0f B/cell update; compact %d B, %.0f B/cell update"
                  % (tape[0], tape[0] / cells, tape[1], tape[1] / cells), file=sys.stderr)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
    lines = [
        "<!-- bench-grad:begin (generated by scripts/bench_grad.py; do not edit by hand) -->",
        "Command: `scripts/bench_grad.py --repeat %d` on this machine (%d cores, %s), %s; medians of "
        "%d runs per kind, the kinds alternating. *record*: the tape (`dg-tape`) on tmpfs; "
        "*+ dg-eval*: then `dg-eval` sweeps it; *compact*: `DGAD_TAPE_FORMAT=compact`, the tape "
        "as `dg-tape-compact` on tmpfs; *grad*: `DGAD_GRAD=ones`, the tape in the process's "
        "memory (compact), swept there at exit. Every gradient is the same bits as *record + "
        "dg-eval*'s%s."
        % (args.repeat, os.cpu_count(), platform.release(), time.strftime("%Y-%m-%d"),
           args.repeat, "" if not problems else " (NOT: " + "; ".join(problems) + ")"),
        "",
        "| workload | native | record (tmpfs) | record + dg-eval | compact (tmpfs) | compact + "
        "dg-eval | grad (in memory) | tape bytes per cell update: dg-tape, compact | peak RSS "
        "of grad |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, n, steps, m, tape, cells, rss in rows:
        nat = m["native"]
        cols = " | ".join("%.0f ms, %.1fx" % (m[k] * 1000, m[k] / nat)
                          for k in ("record", "record+eval", "compact", "compact+eval", "grad"))
        lines.append(
            "| %s %d², %d steps | %.1f ms | %s | %.0f (%.2f GB), %.0f (%.2f GB) | %.0f MB |"
            % (name, n, steps, nat * 1000, cols, tape[0] / cells, tape[0] / 1e9,
               tape[1] / cells, tape[1] / 1e9, rss / 1024))
    lines.append("<!-- bench-grad:end -->")
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        perfdoc.splice("grad", table,
                       "## Gradients: through a tape file and in the process (issue 18)\n\n")
    if problems:
        sys.exit("\n".join(problems))


if __name__ == "__main__":
    main()
