#!/usr/bin/env python3
"""Record-mode benchmark: slowdown over native, tape bytes per active
operation, start-up and constant memory, each measured in the same run.

Writes its table into docs/performance.md between the bench-record markers.
Usage: scripts/bench_record.py [--n N] [--steps S] [--repeat R]
"""
import argparse
import os
import platform
import re
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
LIB = ROOT / "target/release/libdgad.so"


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("DGAD_") and k != "LD_PRELOAD"}


def timed(cmd, env, repeat=1, before=None):
    best = []
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        best.append(time.perf_counter() - t)
    return statistics.median(best)


def max_rss_kb(cmd, env):
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, env=env, check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    return int(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=384)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "preload", "-p", "evaluator"], cwd=ROOT, check=True)
    out = ROOT / "target/bench"
    out.mkdir(parents=True, exist_ok=True)
    kernel = out / "record_kernel"
    subprocess.run(["gcc", "-O3", "-I", ROOT / "include", "-o", kernel,
                    ROOT / "testsuite/benchmarks/record_kernel.c", "-lm"], check=True)
    cmd = [str(kernel), str(args.n), str(args.steps)]
    native_env = clean_env()
    # Native time: repeat the kernel enough times to be measurable.
    native = timed(cmd, native_env, repeat=max(args.repeat, 20))
    # Two places for the tape: the disk file system the repository is on,
    # and /dev/shm (tmpfs). Runs alternate between them, each recording
    # into an empty directory (removing the previous 2 GB tape is not part
    # of the recording).
    disk_dir = Path(tempfile.mkdtemp(prefix="dgad-bench-", dir=out))
    rec_dir = Path(tempfile.mkdtemp(prefix="dgad-bench-", dir="/dev/shm" if Path("/dev/shm").exists() else None))
    rec_env = dict(native_env, LD_PRELOAD=str(LIB), DGAD_RECORD=str(rec_dir / "run"))
    disk_env = dict(rec_env, DGAD_RECORD=str(disk_dir / "run"))
    # The same recording with the tape discarded (`dg-tape` a symlink to
    # /dev/null): what the instrumented program costs by itself.
    discard_env = dict(rec_env, DGAD_RECORD=str(rec_dir / "discard"))

    def clean():
        # Every timed run starts with no tape or file of bytes left from the
        # others (up to four 2 GB files otherwise stay in memory and push
        # the page cache into writeback and reclaim) and nothing dirty.
        for d in (disk_dir, rec_dir):
            shutil.rmtree(d / "run", ignore_errors=True)
            (d / "bytes").unlink(missing_ok=True)
        shutil.rmtree(rec_dir / "discard", ignore_errors=True)
        os.sync()

    def discard_dir():
        clean()
        (rec_dir / "discard").mkdir()
        (rec_dir / "discard" / "dg-tape").symlink_to("/dev/null")

    # And the tape's bytes written without dgad, in the tape writer's
    # 256 KiB pieces, to each file system: what the page cache takes.
    writer = out / "write_bytes"
    subprocess.run(["gcc", "-O2", "-o", writer, ROOT / "testsuite/benchmarks/write_bytes.c"], check=True)
    subprocess.run(cmd, env=rec_env, check=True, stdout=subprocess.DEVNULL)
    tape_bytes = (rec_dir / "run" / "dg-tape").stat().st_size
    write_disk = [str(writer), str(disk_dir / "bytes"), str(tape_bytes), str(256 * 1024)]
    write_shm = [str(writer), str(rec_dir / "bytes"), str(tape_bytes), str(256 * 1024)]
    times = {"disk": [], "shm": [], "discard": [], "write_disk": [], "write_shm": []}
    for _ in range(args.repeat):
        for where, env in (("disk", disk_env), ("shm", rec_env)):
            times[where].append(timed(cmd, env, before=clean))
        times["discard"].append(timed(cmd, discard_env, before=discard_dir))
        times["write_disk"].append(timed(write_disk, native_env, before=clean))
        times["write_shm"].append(timed(write_shm, native_env, before=clean))
    recorded = statistics.median(times["shm"])
    recorded_disk = statistics.median(times["disk"])
    discarded = statistics.median(times["discard"])
    written_disk = statistics.median(times["write_disk"])
    written_shm = statistics.median(times["write_shm"])
    ops = int(re.search(r"active operations (\d+)", subprocess.run(cmd, env=native_env, capture_output=True,
                                                                   text=True).stdout).group(1))
    fs_type = subprocess.run(["findmnt", "-no", "FSTYPE", "-T", str(disk_dir)], capture_output=True,
                             text=True).stdout.strip() or "unknown"
    shutil.rmtree(disk_dir, ignore_errors=True)
    null_env = dict(native_env, LD_PRELOAD=str(LIB), DGAD_MODE="null")
    # Passive, call-heavy code: the cost of shadowing the stack.
    calls = out / "call_heavy"
    subprocess.run(["gcc", "-O1", "-fno-optimize-sibling-calls", "-o", calls,
                    ROOT / "testsuite/benchmarks/call_heavy.c"], check=True)
    calls_cmd = [str(calls), "36"]
    calls_times = {"native": [], "null": [], "record": []}
    calls_rec_env = dict(rec_env, DGAD_RECORD=str(rec_dir / "calls"))
    for _ in range(args.repeat):
        for kind, env in (("native", native_env), ("null", null_env), ("record", calls_rec_env)):
            calls_times[kind].append(timed(calls_cmd, env))
    calls_native, calls_null, calls_rec = (statistics.median(calls_times[k]) for k in ("native", "null", "record"))
    true_native = timed(["/bin/true"], native_env, repeat=50)
    true_rec = timed(["/bin/true"], dict(rec_env, DGAD_RECORD=str(rec_dir / "true")), repeat=50)
    rss_native = max_rss_kb(["/bin/true"], native_env)
    rss_rec = max_rss_kb(["/bin/true"], dict(rec_env, DGAD_RECORD=str(rec_dir / "true")))
    rss_null = max_rss_kb(["/bin/true"], null_env)
    shutil.rmtree(rec_dir, ignore_errors=True)
    lines = [
        "<!-- bench-record:begin (generated by scripts/bench_record.py; do not edit by hand) -->",
        f"Command: `scripts/bench_record.py --n {args.n} --steps {args.steps} --repeat {args.repeat}` on this machine "
        f"({os.cpu_count()} cores, {platform.release()}), {time.strftime('%Y-%m-%d')}; median of {args.repeat} runs per "
        "place of the tape, the places alternating, each recording into an empty directory with no other tape or "
        "file of bytes left in memory; the plain writes of the same number of bytes (into a new file, removed "
        "untimed) alternate with them. "
        "Kernel: `testsuite/benchmarks/record_kernel.c` (gcc -O3), a 2-D heat stencil with every initial value "
        "an AD input and the final norm the output.",
        "",
        "| figure | native | under dgad (record) | ratio / value |",
        "|---|---|---|---|",
        f"| kernel run time ({args.n}², {args.steps} steps, {ops:,} active operations), tape on the disk file "
        f"system ({fs_type}, `target/bench`) | {native*1000:.2f} ms | "
        f"{recorded_disk*1000:.0f} ms | {recorded_disk/native:.0f}x |",
        f"| kernel run time, tape in /dev/shm (tmpfs) | {native*1000:.2f} ms | "
        f"{recorded*1000:.0f} ms | {recorded/native:.0f}x |",
        f"| kernel run time, tape discarded (`dg-tape` → /dev/null): the instrumented program alone | "
        f"{native*1000:.2f} ms | {discarded*1000:.0f} ms | {discarded/native:.0f}x |",
        f"| the tape's {tape_bytes/1e9:.2f} GB written by a plain C program (`write_bytes.c`, 256 KiB `pwrite`s), "
        f"no dgad: {fs_type} / tmpfs | {native*1000:.2f} ms (the kernel) | {written_disk*1000:.0f} ms / "
        f"{written_shm*1000:.0f} ms | {written_disk/native:.0f}x / {written_shm/native:.0f}x |",
        f"| tape bytes per active operation | | {tape_bytes:,} bytes | {tape_bytes/ops:.1f} |",
        f"| passive call-heavy code: `call_heavy 36` (recursive Fibonacci, 48 M calls, gcc -O1) | "
        f"{calls_native*1000:.0f} ms | {calls_rec*1000:.0f} ms (null mode: {calls_null*1000:.0f} ms) | "
        f"{calls_rec/calls_native:.1f}x (null mode: {calls_null/calls_native:.1f}x) |",
        f"| start-up: `/bin/true` | {true_native*1000:.1f} ms | {true_rec*1000:.1f} ms | "
        f"{(true_rec-true_native)*1000:+.1f} ms |",
        f"| peak RSS of `/bin/true` (constant memory overhead) | {rss_native} KB | {rss_rec} KB (null mode: {rss_null} KB) | "
        f"{(rss_rec-rss_native)/1024:+.1f} MB |",
        "<!-- bench-record:end -->",
    ]
    table = "\n".join(lines)
    print(table)
    perfdoc.splice("record", table, "")


if __name__ == "__main__":
    main()
