#!/usr/bin/env python3
"""Record-mode benchmark of Python: the 2-D Burgers solver on lists
(testsuite/benchmarks/burgers.py) recorded under libdgad.so vs plain python3.

Runs each command natively and under the preload, alternating, several
times; reports median times and ratios measured in the same run:

- the computation (burgers.py --time: the time steps and the norm, timed
  inside the process, without start-up),
- the whole process,
- start-up alone (`python3 -c "import dgad"`),
- the engine alone on the same script (DGAD_MODE=null),
- the C++ twin (burgers.cpp, g++ -O3), for comparison;

and checks that every recorded run prints the native value and that the
gradient agrees with the C++ version's. Writes the table into
docs/performance.md between the bench-python markers.

Usage: scripts/bench_python.py [--n N] [--steps S] [--repeat R]
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfdoc  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "target/release/libdgad.so"
EVAL = ROOT / "target/release/dg-eval"
OUT = ROOT / "target/bench"
TAPE = Path("/dev/shm/dgad-bench-python") if Path("/dev/shm").is_dir() else OUT / "record"
TARGET = 25.0

HEADING = """## Python (record mode)

Target (issue #5): recording a pure-Python numeric code costs ≤ 25x plain
`python3`. The benchmark is the 2-D Burgers solver of the Derivgrind
papers, on Python lists (`testsuite/benchmarks/burgers.py`), recorded with
every initial value an AD input; the computation is timed inside the
process (`--time`), apart from CPython's start-up under the recording
(seconds, paid once per process).

"""


def environments():
    native = {k: v for k, v in os.environ.items() if not k.startswith("DGAD_") and k != "LD_PRELOAD"}
    native["PYTHONPATH"] = str(ROOT / "python")
    native["PYTHONHASHSEED"] = "0"
    record = dict(native, LD_PRELOAD=str(LIB), DGAD_MODE="record", DGAD_RECORD=str(TAPE))
    null = dict(native, LD_PRELOAD=str(LIB), DGAD_MODE="null")
    return native, record, null


def run(cmd, env):
    """(seconds, seconds the program reports for its computation or None,
    stdout) of one run."""
    shutil.rmtree(TAPE, ignore_errors=True)
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    inner = None
    for line in result.stderr.splitlines():
        if line.startswith("burgers: time "):
            inner = float(line.split()[2])
    return seconds, inner, result.stdout.strip()


def measure(cmd, envs, repeat):
    """Median whole-run and reported seconds per environment, runs
    alternating; the outputs too."""
    whole = {name: [] for name in envs}
    inner = {name: [] for name in envs}
    outputs = {name: set() for name in envs}
    for _ in range(repeat):
        for name, env in envs.items():
            seconds, reported, stdout = run(cmd, env)
            whole[name].append(seconds)
            if reported is not None:
                inner[name].append(reported)
            outputs[name].add(stdout)
    median = lambda d: {k: statistics.median(v) for k, v in d.items() if v}
    return median(whole), median(inner), outputs


def gradient(cmd, env):
    run(cmd, env)
    blocks = (TAPE / "dg-tape").stat().st_size // 32
    (TAPE / "dg-output-bars").write_text("1.0\n")
    subprocess.run([str(EVAL), str(TAPE)], check=True)
    return [float(v) for v in (TAPE / "dg-input-bars").read_text().split()], blocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "preload", "-p", "evaluator"],
                   cwd=ROOT, check=True)
    OUT.mkdir(parents=True, exist_ok=True)
    cxx = OUT / "burgers"
    subprocess.run(["g++", "-O3", "-I", str(ROOT / "include"), "-o", str(cxx),
                    str(ROOT / "testsuite/benchmarks/burgers.cpp")], check=True)
    python = subprocess.run([sys.executable, "-c", "import sys; print(sys.executable)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    size = [str(args.n), str(args.steps)]
    burgers = [python, str(ROOT / "testsuite/benchmarks/burgers.py")] + size + ["--time"]
    native, record, null = environments()
    both = {"native": native, "record": record}

    problems = []
    whole, inner, outputs = measure(burgers, both, args.repeat)
    if len(outputs["native"] | outputs["record"]) != 1:
        problems.append("the recorded runs print %s, the native ones %s"
                        % (outputs["record"], outputs["native"]))
    startup, _, _ = measure([python, "-c", "import dgad"], both, args.repeat)
    engine, engine_inner, _ = measure(burgers, {"native": native, "null": null}, args.repeat)
    cxx_whole, _, cxx_out = measure([str(cxx)] + size, both, args.repeat)
    if cxx_out["native"] != outputs["native"]:
        problems.append("C++ prints %s, Python %s" % (cxx_out["native"], outputs["native"]))
    g_py, blocks = gradient(burgers, record)
    g_cxx, cxx_blocks = gradient([str(cxx)] + size, record)
    scale = max(abs(g) for g in g_cxx)
    worst = max(abs(a - b) for a, b in zip(g_py, g_cxx)) / scale
    if len(g_py) != len(g_cxx) or worst > 1e-12:
        problems.append("the gradients of Python and C++ differ (relative %.2e)" % worst)
    shutil.rmtree(TAPE, ignore_errors=True)

    ratio = inner["record"] / inner["native"]
    cells = (args.n - 2) ** 2 * args.steps
    lines = [
        "<!-- bench-python:begin (generated by scripts/bench_python.py; do not edit by hand) -->",
        "Command: `scripts/bench_python.py --n %d --steps %d --repeat %d` on this machine "
        "(%d cores, %s, Python %s), %s; tape in %s. Median of alternating native/dgad runs; "
        "the ratios are from the same run. Program: `testsuite/benchmarks/burgers.py %d %d` "
        "(2-D Burgers, %d×%d grid on lists, %d steps, `math.sqrt`; all %s initial values are "
        "AD inputs, the final norm the output); every recorded run printed the native value, "
        "and the gradient equals that of the C++ twin `burgers.cpp` (to %.1e relative)."
        % (args.n, args.steps, args.repeat, os.cpu_count(), platform.release(),
           platform.python_version(), time.strftime("%Y-%m-%d"), TAPE.parent, args.n,
           args.steps, args.n, args.n, args.steps, format(2 * args.n * args.n, ","), worst),
        "",
        "| figure | native | under dgad | ratio |",
        "|---|---|---|---|",
        "| **the computation** (time steps and norm, timed in the process; %s cell updates, "
        "%s tape blocks) | %.1f ms | %.0f ms | **%.0fx** (target ≤ %.0fx) |"
        % (format(cells, ","), format(blocks, ","), inner["native"] * 1000,
           inner["record"] * 1000, ratio, TARGET),
        "| per tape block | %.1f ns | %.0f ns | |"
        % (inner["native"] / blocks * 1e9, inner["record"] / blocks * 1e9),
        "| whole process (record) | %.1f ms | %.0f ms | %.0fx |"
        % (whole["native"] * 1000, whole["record"] * 1000, whole["record"] / whole["native"]),
        "| start-up: `python3 -c \"import dgad\"` (record) | %.1f ms | %.0f ms | %.0fx |"
        % (startup["native"] * 1000, startup["record"] * 1000,
           startup["record"] / startup["native"]),
        "| engine alone (`DGAD_MODE=null`): the computation | %.1f ms | %.1f ms | %.1fx |"
        % (engine_inner["native"] * 1000, engine_inner["null"] * 1000,
           engine_inner["null"] / engine_inner["native"]),
        "| C++ twin (g++ -O3), whole process, record (%s tape blocks) | %.1f ms | %.0f ms | %.0fx |"
        % (format(cxx_blocks, ","), cxx_whole["native"] * 1000, cxx_whole["record"] * 1000,
           cxx_whole["record"] / cxx_whole["native"]),
        "<!-- bench-python:end -->",
    ]
    table = "\n".join(lines)
    print(table)
    for problem in problems:
        print("PROBLEM:", problem, file=sys.stderr)
    perfdoc.splice("python", table, HEADING)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
