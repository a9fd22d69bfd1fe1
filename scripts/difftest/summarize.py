#!/usr/bin/env python3
"""Markdown table of a difftest --json file: one row per case, one column per
variant (status and the larger of the two errors).
    scripts/difftest/summarize.py /tmp/r.json [--only-failures]"""
import json
import sys


def main():
    rows, cols = {}, []
    for line in open(sys.argv[1]):
        r = json.loads(line)
        v = r["variant"]
        if v not in cols:
            cols.append(v)
        e = max(r.get("err_rev", 0.0), r.get("err_fwd", 0.0), r.get("err_dot", 0.0)) if "err_rev" in r else None
        cell = r["status"] + ("" if e is None else " %.1e" % e)
        if r.get("value_diff"):
            cell += " (values: %s)" % r["value_diff"]
        rows.setdefault(r["case"], {})[v] = cell
    only_fail = "--only-failures" in sys.argv
    print("| case | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for case, cells in rows.items():
        if only_fail and all(c.startswith("PASS ") for c in cells.values()):
            continue
        print("| %s | %s |" % (case, " | ".join(cells.get(c, "") for c in cols)))


if __name__ == "__main__":
    main()
