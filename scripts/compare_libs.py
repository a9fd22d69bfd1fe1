#!/usr/bin/env python3
"""Compares builds of libdgad.so on one command: runs it natively and under
each library, alternating, and prints the medians and their ratios to the
native run, all measured in the same run (for throw-away builds that test
an idea before it is kept).

Usage: scripts/compare_libs.py [--repeat N] [--env K=V ...] LIB... -- COMMAND...
Each LIB is a path to a libdgad.so (a build kept aside with `cp`). Prints
the median and the fastest of each: on a host busy in bursts the medians
move between runs by more than a change is worth, while the fastest run
of a deterministic program is what its code costs.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: compare_libs.py [--repeat N] [--env K=V ...] LIB... -- COMMAND...")
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--env", action="append", default=[], help="K=V for the runs under dgad")
    parser.add_argument("libs", nargs="+")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]
    for lib in args.libs:
        if not os.path.isfile(lib):
            sys.exit(f"compare_libs.py: no library at {lib}")
    extra = dict(kv.split("=", 1) for kv in args.env)
    runs = ["native"] + args.libs
    times = {r: [] for r in runs}
    for _ in range(args.repeat):
        for r in runs:
            env = {k: v for k, v in os.environ.items()
                   if k != "LD_PRELOAD" and not k.startswith("DGAD_")}
            if r != "native":
                env["LD_PRELOAD"] = os.path.abspath(r)
                env.update(extra)
            start = time.perf_counter()
            subprocess.run(command, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[r].append(time.perf_counter() - start)
    native = statistics.median(times["native"])
    fastest_native = min(times["native"])
    print(f"`{' '.join(command)}`, {args.repeat} alternating runs")
    print()
    print("| run | median | ratio to native | fastest | ratio to native |")
    print("|---|---|---|---|---|")
    for r in runs:
        m, f = statistics.median(times[r]), min(times[r])
        print(f"| {r} | {m * 1000:.1f} ms | {m / native:.2f}x "
              f"| {f * 1000:.1f} ms | {f / fastest_native:.2f}x |")


if __name__ == "__main__":
    main()
