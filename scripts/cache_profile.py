#!/usr/bin/env python3
"""Where a program's instructions go under dgad: callgrind counts of the
code cache, attributed to what the translator emitted there.

This VM has no hardware counters, so engine overheads are measured in
instructions: callgrind counts every executed instruction, cache code
included, and `DGAD_DUMP_CACHE` writes the cache (blocks, maps, bytes) at
exit so those addresses can be disassembled. Two runs that differ only in
their iteration count give per-iteration figures with start-up removed.
Address randomisation must be off (`setarch -R`) so that both runs place
the cache at the same addresses.

    LIB=target/release/libdgad.so
    for n in 20000 60000; do
      setarch -R valgrind --tool=callgrind --trace-children=yes --dump-instr=yes \\
        --callgrind-out-file=/tmp/cg.$n env PYTHONHASHSEED=0 DGAD_MODE=null \\
        DGAD_DUMP_CACHE=/tmp/dump.$n LD_PRELOAD=$LIB python3 testsuite/benchmarks/pyloop.py $n
    done
    scripts/cache_profile.py /tmp/cg.20000 /tmp/cg.60000 /tmp/dump.60000 40000

Needs the iced-x86 Python package (`pip install iced-x86`). Valgrind 3.19
cannot run the runtime on a CPU with FSGSBASE: the runtime reads its
thread context with `rdgsbase`, which Valgrind does not decode (an
`unhandled instruction` and SIGILL; seen on an AMD EPYC Zen 3,
2026-11-28); there, compare timings (`scripts/compare_libs.py`, the
fastest runs) instead.
"""
import argparse
import collections
import re
import sys

try:
    from iced_x86 import Decoder, Formatter, FormatterSyntax
except ImportError:
    sys.exit("cache_profile.py needs the iced-x86 package: pip install iced-x86")


def self_costs(path):
    """Instructions executed per address, from a callgrind file written with
    --dump-instr=yes ('positions: instr line'); call lines' inclusive
    costs are skipped."""
    counts = collections.Counter()
    last = [0, 0]
    skip_next = False

    def position(token, previous):
        if token == "*":
            return previous
        if token[0] in "+-":
            delta = int(token[1:], 0)
            return previous + delta if token[0] == "+" else previous - delta
        return int(token, 0)

    with open(path) as f:
        for line in f:
            if line[0] in "0123456789+-*":
                fields = line.split()
                last = [position(fields[0], last[0]), position(fields[1], last[1])]
                if skip_next:
                    skip_next = False
                elif len(fields) > 2:
                    counts[last[0]] += int(fields[2])
            elif line.startswith("calls="):
                skip_next = True
    return counts


def cache_blocks(path):
    """The blocks of a DGAD_DUMP_CACHE file."""
    blocks, block = [], None
    with open(path) as f:
        for line in f:
            kind, _, rest = line.partition(" ")
            if kind == "block":
                _, _, cache_start, _, _ = rest.split()
                block = {"start": int(cache_start, 16), "boundaries": set(), "code": b"", "first": None}
                blocks.append(block)
            elif kind == "map":
                offset, _, boundary = rest.split()
                if block["first"] is None:
                    # Code starts at the first mapped offset (data before
                    # it: the block's guest address).
                    block["first"] = int(offset)
                if boundary == "1":
                    block["boundaries"].add(int(offset))
            elif kind == "code":
                block["code"] = bytes.fromhex(rest.strip())
    return blocks


def category(text, at_boundary):
    """What an instruction of the cache is there for."""
    if "gs:" in text:
        return "context access (spill, reload, lookup table)"
    if text.startswith(("push qword ptr [", "pop rcx")):
        return "call/return: return address"
    if at_boundary and not text.startswith(("jmp", "call", "ret")):
        return "guest instruction (copied)"
    if text.startswith(("movzx eax,cx", "cmp rcx", "jne", "jrcxz", "not rdx", "lea rcx", "jmp rax")):
        return "lookup: index, compare, jump"
    if text.startswith("jmp"):
        return "jump to the next block or an exit"
    return "other inserted: " + text.split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("short", help="callgrind file of the shorter run")
    ap.add_argument("long", help="callgrind file of the longer run")
    ap.add_argument("dump", help="DGAD_DUMP_CACHE file of the longer run")
    ap.add_argument("iterations", type=float, help="iterations the longer run made more")
    ap.add_argument("--top", type=int, default=30, help="instruction forms to list")
    args = ap.parse_args()

    short, long = self_costs(args.short), self_costs(args.long)
    per_iteration = {a: (long[a] - short.get(a, 0)) / args.iterations for a in long}
    formatter = Formatter(FormatterSyntax.INTEL)
    by_category, by_form = collections.Counter(), collections.Counter()
    in_cache = 0.0
    for block in cache_blocks(args.dump):
        first = block["first"] or 0
        for insn in Decoder(64, block["code"][first:], ip=block["start"] + first):
            n = per_iteration.get(insn.ip, 0.0)
            if n <= 0:
                continue
            text = formatter.format(insn)
            kind = category(text, insn.ip - block["start"] in block["boundaries"])
            in_cache += n
            by_category[kind] += n
            by_form[(kind, re.sub(r"[0-9A-F]{6,}h", "X", text))] += n
    total = sum(n for n in per_iteration.values() if n > 0)
    print(f"instructions per iteration: {total:.0f} in all, {in_cache:.0f} in the code cache, "
          f"{total - in_cache:.0f} elsewhere (the runtime on lookup misses and exits, libraries run natively)")
    for kind, n in by_category.most_common():
        print(f"{n:9.1f}  {kind}")
    print()
    for (kind, form), n in by_form.most_common(args.top):
        print(f"{n:9.1f}  {form:40s} {kind}")


if __name__ == "__main__":
    main()
