#!/usr/bin/env python3
"""Forward-mode (DGAD_MODE=dot) benchmark: run time and peak memory under
libdgad.so in dot mode against the native run, measured in the same run.

Workloads (every initial value seeded with dot value 1 in dot mode, the
final norm's dot value printed on stderr):

  burgers   testsuite/benchmarks/burgers.cpp (g++ -O3), 2-D Burgers, N x N
            grid, STEPS steps (default 100 x 100, 100 steps);
  stencil   testsuite/benchmarks/record_kernel.c (gcc -O3, vectorised),
            2-D heat stencil (default 384 x 384, 60 steps);
  python    testsuite/benchmarks/burgers.py, the same Burgers solver on
            Python lists (default 32 x 32, 40 steps): the whole process and
            the computation alone (timed inside the process, `--time`).

Native and dot runs alternate (the order swapping every round); the table
gives the median of --repeat runs each, their ratio, and the peak RSS of
the process (GNU time's %M, its ru_maxrss). Every dot run must print the native
run's stdout. Then, at small sizes, the dot value of each workload is
checked against the tape's forward sweep (record mode, `dg-eval --forward`
seeded with all-ones; tapes in target/bench/dot).

Usage: scripts/bench_dot.py [--repeat R] [--quick] [--no-build] [--only NAME,...]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "target/release"
LIB = RELEASE / "libdgad.so"
EVAL = RELEASE / "dg-eval"
OUT = ROOT / "target/bench/dot"

#: name: (full size, --quick size), each (N, STEPS).
SIZES = {
    "burgers": ((100, 100), (40, 20)),
    "stencil": ((384, 60), (128, 20)),
    "python": ((32, 40), (16, 10)),
}
#: The sizes of the check against the tape (small: the tapes are written).
CHECK_SIZES = {"burgers": (32, 20), "stencil": (64, 20), "python": (16, 10)}


def python_executable():
    """The interpreter itself, not a launcher script (pyenv's shim would run
    under the preload too)."""
    return subprocess.run([sys.executable, "-c", "import sys; print(sys.executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()


def environments():
    native = {k: v for k, v in os.environ.items() if not k.startswith("DGAD_") and k != "LD_PRELOAD"}
    native["PYTHONPATH"] = str(ROOT / "python")
    native["PYTHONHASHSEED"] = "0"
    native["PYTHONDONTWRITEBYTECODE"] = "1"
    dot = dict(native, LD_PRELOAD=str(LIB), DGAD_MODE="dot")
    return native, dot


def build(no_build):
    if not no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "preload", "-p", "evaluator"],
                       cwd=ROOT, check=True)
    for tool in (LIB, EVAL):
        if not tool.is_file():
            sys.exit("bench_dot.py: %s is missing (cargo build --release -p preload -p evaluator)"
                     % tool)
    OUT.mkdir(parents=True, exist_ok=True)
    burgers, stencil = OUT / "burgers", OUT / "record_kernel"
    subprocess.run(["g++", "-O3", "-I", str(ROOT / "include"), "-o", str(burgers),
                    str(ROOT / "testsuite/benchmarks/burgers.cpp")], check=True)
    subprocess.run(["gcc", "-O3", "-I", str(ROOT / "include"), "-o", str(stencil),
                    str(ROOT / "testsuite/benchmarks/record_kernel.c"), "-lm"], check=True)
    python = python_executable()
    return {
        "burgers": lambda n, s: [str(burgers), str(n), str(s)],
        "stencil": lambda n, s: [str(stencil), str(n), str(s)],
        "python": lambda n, s: [python, str(ROOT / "testsuite/benchmarks/burgers.py"),
                                str(n), str(s), "--time"],
    }


TIME = Path("/usr/bin/time")


class Run:
    """One finished process: wall seconds, peak RSS (KiB), outputs.

    The peak RSS comes from /usr/bin/time (GNU time's %M, the child's
    ru_maxrss): a child forked by this Python process itself would count
    this process's pages, which it shares until its exec, in its peak. The
    wall time includes time's own start, the same for both modes."""

    def __init__(self, command, env):
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
                tempfile.NamedTemporaryFile(mode="r") as rss:
            start = time.perf_counter()
            self.status = subprocess.run([str(TIME), "-f", "%M", "-o", rss.name] + command,
                                         env=env, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=err).returncode
            self.seconds = time.perf_counter() - start
            lines = rss.read().split()
            self.max_rss_kib = int(lines[-1]) if lines and lines[-1].isdigit() else 0
            out.seek(0)
            err.seek(0)
            self.stdout = out.read().decode(errors="replace")
            self.stderr = err.read().decode(errors="replace")

    def reported(self, key):
        """The number after `<program>: <key> ` on stderr, or None."""
        for line in self.stderr.splitlines():
            words = line.split()
            if len(words) == 3 and words[0].endswith(":") and words[1] == key:
                return float(words[2])
        return None


def measure(command, envs, repeat, problems, label):
    """Alternating runs of `command` in each environment: lists of Runs."""
    runs = {name: [] for name in envs}
    order = list(envs)
    for name in order:  # warm-up: page cache, the client library's build cache
        Run(command, envs[name])
    for round_ in range(repeat):
        for name in (order if round_ % 2 == 0 else order[::-1]):
            run = Run(command, envs[name])
            if run.status != 0:
                problems.append("%s (%s) exited with status %d:\n%s"
                                % (label, name, run.status, run.stderr[-2000:]))
                return None
            runs[name].append(run)
    native_out = {r.stdout for r in runs["native"]}
    dot_out = {r.stdout for r in runs["dot"]}
    if len(native_out | dot_out) != 1:
        problems.append("%s: the dot runs print %r, the native runs %r"
                        % (label, sorted(dot_out), sorted(native_out)))
    return runs


def median(values):
    return statistics.median(values) if values else float("nan")


def forward_sweep_reference(command, env, inputs):
    """The output's derivative along all-ones from a recording of `command`
    and dg-eval --forward."""
    tape = OUT / "tape"
    shutil.rmtree(tape, ignore_errors=True)
    subprocess.run(command, env=dict(env, DGAD_MODE="record", DGAD_RECORD=str(tape)),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (tape / "dg-input-dots").write_text("1.0\n" * inputs)
    subprocess.run([str(EVAL), str(tape), "--forward"], check=True, stdout=subprocess.DEVNULL)
    value = float((tape / "dg-output-dots").read_text().split()[0])
    shutil.rmtree(tape, ignore_errors=True)
    return value


def check_against_tape(commands, names, envs, problems):
    """Rows (workload, size, dot value, tape's forward sweep, relative
    difference) at the check sizes."""
    rows = []
    _, dot = envs
    for name in names:
        n, steps = CHECK_SIZES[name]
        command = commands[name](n, steps)
        run = Run(command, dot)
        value = run.reported("dot")
        inputs = (2 if name in ("burgers", "python") else 1) * n * n
        if run.status != 0 or value is None:
            problems.append("%s %dx%d, %d steps, dot mode: status %d, no dot value on stderr:\n%s"
                            % (name, n, n, steps, run.status, run.stderr[-2000:]))
            continue
        reference = forward_sweep_reference(command, dot, inputs)
        difference = abs(value - reference) / max(abs(reference), 1e-300)
        rows.append((name, "%d², %d steps" % (n, steps), value, reference, difference))
        if not difference <= 1e-10:
            problems.append("%s: dot value %r, the tape's forward sweep %r"
                            % (name, value, reference))
    return rows


def main():
    parser = argparse.ArgumentParser(
        description="Forward mode (DGAD_MODE=dot) against native: run time and peak RSS, "
                    "medians of alternating runs in the same invocation.")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per mode and workload (default 5; the medians are taken)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (a minute or so), for a smoke test")
    parser.add_argument("--no-build", action="store_true",
                        help="use target/release as it is (no cargo build)")
    parser.add_argument("--only", default=",".join(SIZES),
                        help="workloads to run, comma-separated (default: %(default)s)")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    for name in names:
        if name not in SIZES:
            parser.error("unknown workload %r (known: %s)" % (name, ", ".join(SIZES)))
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.repeat < 5:
        print("bench_dot.py: --repeat %d: medians of fewer than 5 runs are noisy"
              % args.repeat, file=sys.stderr)

    if not TIME.is_file():
        sys.exit("bench_dot.py: %s (GNU time) is needed for the peak RSS: apt-get install time"
                 % TIME)
    commands = build(args.no_build)
    native, dot = environments()
    envs = {"native": native, "dot": dot}
    problems = []
    rows = []
    dots = []
    for name in names:
        n, steps = SIZES[name][1 if args.quick else 0]
        command = commands[name](n, steps)
        label = "%s %d² %d steps" % (name, n, steps)
        print("measuring %s ..." % label, file=sys.stderr, flush=True)
        runs = measure(command, envs, args.repeat, problems, label)
        if runs is None:
            continue
        whole = {k: median([r.seconds for r in v]) for k, v in runs.items()}
        rss = {k: max(r.max_rss_kib for r in v) for k, v in runs.items()}
        what = {
            "burgers": "`burgers.cpp` (g++ -O3) %d×%d, %d steps" % (n, n, steps),
            "stencil": "`record_kernel.c` heat stencil (gcc -O3) %d×%d, %d steps" % (n, n, steps),
            "python": "`burgers.py` %d×%d, %d steps: whole process" % (n, n, steps),
        }[name]
        rows.append((what, whole["native"], whole["dot"], rss["native"], rss["dot"]))
        if name == "python":
            inner = {k: median([r.reported("time") for r in v if r.reported("time") is not None])
                     for k, v in runs.items()}
            rows.append(("`burgers.py`: the computation (timed in the process)",
                         inner["native"], inner["dot"], None, None))
        dot_values = {r.reported("dot") for r in runs["dot"]}
        dots.append("%s: %s" % (label, ", ".join(repr(v) for v in sorted(dot_values, key=str))))
        if None in dot_values:
            problems.append("%s: a dot run printed no dot value on stderr" % label)

    print()
    print("Command: `scripts/bench_dot.py%s%s` on this machine (%d cores), %s; "
          "median of %d alternating native/dot runs each, ratios from the same run; "
          "peak RSS: the largest of the runs (GNU time %%M)."
          % (" --quick" if args.quick else "",
             "" if args.repeat == 5 else " --repeat %d" % args.repeat,
             os.cpu_count(), time.strftime("%Y-%m-%d"), args.repeat))
    print()
    print("| workload | native | dot mode | ratio | peak RSS native | peak RSS dot | RSS ratio |")
    print("|---|---|---|---|---|---|---|")
    for what, t_native, t_dot, rss_native, rss_dot in rows:
        memory = ("| %.1f MiB | %.1f MiB | %.1fx |"
                  % (rss_native / 1024, rss_dot / 1024, rss_dot / rss_native)
                  if rss_native else "| | | |")
        print("| %s | %.1f ms | %.1f ms | %.1fx %s"
              % (what, t_native * 1000, t_dot * 1000, t_dot / t_native, memory))
    print()
    print("Dot values of the norm along all-ones (stderr of the dot runs):")
    for line in dots:
        print("  " + line)

    print()
    print("Check against the tape (record mode, dg-eval --forward seeded with all-ones):")
    print()
    print("| workload | size | dot mode | tape's forward sweep | relative difference |")
    print("|---|---|---|---|---|")
    for name, size, value, reference, difference in check_against_tape(
            commands, names, (native, dot), problems):
        print("| %s | %s | %.17g | %.17g | %.1e |" % (name, size, value, reference, difference))
    for problem in problems:
        print("PROBLEM: " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
