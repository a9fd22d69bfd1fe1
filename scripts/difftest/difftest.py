#!/usr/bin/env python3
"""Differential derivative tests of dgad against real libraries.

Each case evaluates a library function at a point; the client program marks
the inputs and outputs.  For every case and variant (DGAD_CPUID, extra
environment) the driver

  1. runs the client natively (with DT_REF=1: analytic Jacobian entries),
  2. computes central finite differences natively (full Jacobian for small
     cases; directional derivatives J v for large ones),
  3. records under libdgad.so and checks that the printed values are
     bit-identical to the native run and whether anything reached stderr,
  4. sweeps the tape with dg-eval in reverse (identity or random output
     weights W) and forward (identity or random directions V); full-mode
     cases are also recorded with DGAD_GRAD=jacobian (the tape in memory,
     swept in the process) and with DGAD_TAPE_FORMAT=compact (the tape as
     dg-tape-compact), whose dg-jacobian must be dg-eval's bits on dg-tape,
  5. compares: full mode: J_rev, J_fwd against J_ref (analytic entries where
     the client knows them, else finite differences); projection mode:
     J V (forward) and W^T J V (reverse) against finite differences along V.

The error is normwise: max|got - ref| / max|ref|, compared with the case's
tolerance (stated with its reason in cases.py).  See README.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import cases as C  # noqa: E402

LIB = os.environ.get("DGAD_LIB", os.path.join(ROOT, "target/release/libdgad.so"))
EVAL = os.environ.get("DGAD_EVAL", os.path.join(ROOT, "target/release/dg-eval"))
MAX_RECORD_BYTES = 500 * 1024 * 1024
TIMEOUT = 120


def nice(cmd):
    return ["nice", "-n", "10", "timeout", str(TIMEOUT)] + cmd


def base_env(extra):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("DGAD_") and k not in ("DGAD_PY_CACHE",):
            del env[k]
    env.pop("LD_PRELOAD", None)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (
        ":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def parse_out(text):
    ys, js, yraw = [], {}, []
    for line in text.splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "y":
            yraw.append(p[1])
            ys.append(float(p[1]))
        elif p[0] == "J":
            js[(int(p[1]), int(p[2]))] = float(p[3])
    return np.array(ys), js, yraw


def write_vec(path, x):
    with open(path, "w") as f:
        f.write("\n".join(repr(float(v)) for v in x) + "\n")


def write_mat(path, M):
    with open(path, "w") as f:
        for row in M:
            f.write(" ".join(repr(float(v)) for v in row) + "\n")


def read_mat(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip():
                rows.append([float(v) for v in line.split()])
    return np.array(rows)


def dir_bytes(d):
    tot = 0
    for r, _, fs in os.walk(d):
        for f in fs:
            try:
                tot += os.path.getsize(os.path.join(r, f))
            except OSError:
                pass
    return tot


class Runner:
    def __init__(self, build, work):
        self.build = build
        self.work = work

    def cmd(self, case, infile):
        return case.command(self.build) + [infile]

    def under_dgad(self, case, infile, env):
        """The command of a run under dgad (`env` preloads the runtime): a
        static client runs in the host beside libdgad.so, as dgad starts it."""
        cmd = self.cmd(case, infile)
        if C.STATIC and case.client != "py":
            env["DGAD_STATIC_EXEC"] = cmd[0]
            cmd = [os.path.join(os.path.dirname(LIB), "dgad-static-host")] + cmd[1:]
        return cmd

    def native(self, case, x, env_extra, ref=False):
        inf = os.path.join(self.work, "in.txt")
        write_vec(inf, x)
        env = base_env(env_extra)
        if ref:
            env["DT_REF"] = "1"
        r = subprocess.run(nice(self.cmd(case, inf)), env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("native run failed (%d): %s" % (r.returncode, r.stderr[-500:]))
        return parse_out(r.stdout)

    def fn(self, case, x, env_extra):
        """Native function value (in-process for Python cases)."""
        if case.pyfunc is not None:
            return np.asarray(case.pyfunc(np.array(x)), dtype=np.float64).ravel()
        return self.native(case, x, env_extra)[0]

    def record(self, case, x, env_extra):
        inf = os.path.join(self.work, "in.txt")
        write_vec(inf, x)
        rec = os.path.join(self.work, "rec")
        shutil.rmtree(rec, ignore_errors=True)
        env = base_env(env_extra)
        env["DGAD_RECORD"] = rec
        env["LD_PRELOAD"] = LIB
        t = time.time()
        r = subprocess.run(nice(self.under_dgad(case, inf, env)), env=env, capture_output=True, text=True)
        dt = time.time() - t
        return r, rec, dt


    def record_again(self, case, x, env_extra, name, settings):
        """Records the case once more into a directory `name` with the
        settings `settings` (environment variables); returns the directory."""
        inf = os.path.join(self.work, "in.txt")
        write_vec(inf, x)
        d = os.path.join(self.work, name)
        shutil.rmtree(d, ignore_errors=True)
        env = base_env(env_extra)
        env["DGAD_RECORD"] = d
        env["LD_PRELOAD"] = LIB
        env.update(settings)
        r = subprocess.run(nice(self.under_dgad(case, inf, env)), env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s run failed (%d): %s" % (settings, r.returncode, r.stderr[-400:]))
        return d

    def grad_in_memory(self, case, x, env_extra):
        """The Jacobian swept in the recording process (DGAD_GRAD=jacobian),
        as dg-jacobian's text (rows are outputs)."""
        d = self.record_again(case, x, env_extra, "grad", {"DGAD_GRAD": "jacobian"})
        with open(os.path.join(d, "dg-jacobian")) as f:
            text = f.read()
        shutil.rmtree(d, ignore_errors=True)
        return text

    def compact_jacobian(self, case, x, env_extra):
        """The Jacobian of a compact tape (DGAD_TAPE_FORMAT=compact) swept
        by dg-eval, as dg-jacobian's text (rows are outputs)."""
        d = self.record_again(case, x, env_extra, "compact", {"DGAD_TAPE_FORMAT": "compact"})
        if os.path.exists(os.path.join(d, "dg-tape")):
            raise RuntimeError("the compact run left dg-tape")
        r = subprocess.run(nice([EVAL, "--threads", "1", "--jacobian", d]),
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("dg-eval --jacobian on the compact tape failed: " + r.stderr[-400:])
        with open(os.path.join(d, "dg-jacobian")) as f:
            text = f.read()
        shutil.rmtree(d, ignore_errors=True)
        return text

    def dot(self, case, x, env_extra, direction):
        """Forward mode in the run (DGAD_MODE=dot): the marked inputs seeded
        with `direction` through dg-input-dots, the marked outputs' tangents
        read from dg-output-dots."""
        inf = os.path.join(self.work, "in.txt")
        write_vec(inf, x)
        d = os.path.join(self.work, "dot")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        write_vec(os.path.join(d, "dg-input-dots"), direction)
        env = base_env(env_extra)
        env["DGAD_MODE"] = "dot"
        env["DGAD_RECORD"] = d
        env["LD_PRELOAD"] = LIB
        r = subprocess.run(nice(self.under_dgad(case, inf, env)), env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("dot run failed (%d): %s" % (r.returncode, r.stderr[-400:]))
        t = read_mat(os.path.join(d, "dg-output-dots")).ravel()
        shutil.rmtree(d, ignore_errors=True)
        return t, [l for l in r.stderr.splitlines() if l.strip()], parse_out(r.stdout)[2]


def sweep(rec, seed, forward):
    name = "dg-input-dots" if forward else "dg-output-bars"
    outname = "dg-output-dots" if forward else "dg-input-bars"
    write_mat(os.path.join(rec, name), seed)
    cmd = [EVAL, "--threads", "1", rec] + (["--forward"] if forward else [])
    r = subprocess.run(nice(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("dg-eval failed: " + r.stderr[-400:])
    M = read_mat(os.path.join(rec, outname))
    return M.reshape(-1, seed.shape[1])


def relerr(got, ref):
    got = np.asarray(got, dtype=float)
    ref = np.asarray(ref, dtype=float)
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    diff = np.abs(got - ref)
    if not np.all(np.isfinite(got)):
        return float("inf"), None
    d = np.max(diff) if diff.size else 0.0
    worst = np.unravel_index(np.argmax(diff), diff.shape) if diff.size else None
    if scale == 0:
        return (0.0 if d == 0 else float("inf")), worst
    return d / scale, worst


def run_case(runner, case, variant):
    vname, venv = variant
    res = {"case": case.name, "variant": vname, "ref": case.ref, "tol": case.tol}
    x0 = np.array(case.x0, dtype=float)
    n = len(x0)
    try:
        y0, jref_an, yraw_native = runner.native(case, x0, venv, ref=True)
    except Exception as e:  # noqa: BLE001
        res.update(status="ERROR", detail=str(e))
        return res
    m = len(y0)
    res["n_in"], res["n_out"] = n, m
    full = case.full if case.full is not None else (n * m <= 4096 and n <= 400)
    rng = np.random.default_rng(1234)
    h = np.array([case.h * max(1.0, abs(v)) if case.h_rel else case.h for v in x0])
    # reference
    if full:
        Jfd = np.full((m, n), np.nan)
        need_fd = case.ref != "analytic" or any((i, j) not in jref_an or not np.isfinite(jref_an[(i, j)])
                                                 for i in range(m) for j in range(n))
        if need_fd or case.check_fd:
            for j in range(n):
                if j < case.fixed:
                    Jfd[:, j] = 0.0
                    continue
                xp = x0.copy(); xp[j] += h[j]
                xm = x0.copy(); xm[j] -= h[j]
                Jfd[:, j] = (runner.fn(case, xp, venv) - runner.fn(case, xm, venv)) / (xp[j] - xm[j])
        Jref = Jfd.copy()
        nan_an = 0
        for (i, j), v in jref_an.items():
            if np.isfinite(v):
                Jref[i, j] = v
            else:
                nan_an += 1
        if jref_an:
            if case.check_fd and need_fd is not None:
                an = np.array([[jref_an.get((i, j), np.nan) for j in range(n)] for i in range(m)])
                mask = np.isfinite(an) & np.isfinite(Jfd)
                if mask.any():
                    res["analytic_vs_fd"] = relerr(Jfd[mask], an[mask])[0]
            res["ref"] = "analytic" if len(jref_an) - nan_an == m * n else (
                "analytic+fd" if len(jref_an) - nan_an else "fd")
        else:
            res["ref"] = "fd"
    else:
        K = case.ndir
        V = rng.standard_normal((n, K))
        V[:case.fixed, :] = 0.0
        W = rng.standard_normal((m, K))
        JV = np.zeros((m, K))
        for k in range(K):
            hv = case.h
            JV[:, k] = (runner.fn(case, x0 + hv * V[:, k], venv) - runner.fn(case, x0 - hv * V[:, k], venv)) / (2 * hv)
        res["ref"] = "fd-directional(%d)" % K
    # record
    r, rec, dt = runner.record(case, x0, venv)
    res["record_s"] = round(dt, 2)
    err_lines = [l for l in r.stderr.splitlines() if l.strip()]
    res["stderr"] = err_lines[:3]
    if r.returncode != 0:
        res.update(status="CRASH", detail="exit %d: %s" % (r.returncode, " | ".join(err_lines[-3:])))
        shutil.rmtree(rec, ignore_errors=True)
        return res
    size = dir_bytes(rec)
    res["record_mb"] = round(size / 1e6, 1)
    y1, _, yraw_dgad = parse_out(r.stdout)
    res["values_identical"] = yraw_dgad == yraw_native
    if not res["values_identical"]:
        if len(yraw_dgad) != len(yraw_native):
            res["value_diff"] = "%d values under dgad, %d natively" % (len(yraw_dgad), len(yraw_native))
        else:
            a, b = np.array(y1), np.array(y0)
            k = int(np.sum(a != b))
            rel = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))
            res["value_diff"] = "%d of %d differ, max rel %.2g" % (k, len(a), rel)
    if not os.path.exists(os.path.join(rec, "dg-tape")):
        res.update(status="ERROR", detail="no tape written")
        return res
    try:
        if full:
            Jrev = sweep(rec, np.eye(m), forward=False).T      # (m, n): row i = bars of output i
            Jfwd = sweep(rec, np.eye(n), forward=True)         # (m, n)
            # The same Jacobian swept in the process (DGAD_GRAD): the same
            # bits as dg-eval's on the file (both print %.16g).
            cmd = [EVAL, "--threads", "1", "--jacobian", rec]
            r = subprocess.run(nice(cmd), capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("dg-eval --jacobian failed: " + r.stderr[-400:])
            with open(os.path.join(rec, "dg-jacobian")) as f:
                file_text = f.read()
            gim = runner.grad_in_memory(case, x0, venv)
            cpt = runner.compact_jacobian(case, x0, venv)
            if any(vname.endswith(" " + l) for l in case.values_vary):
                # Each run plans anew (FFTW_MEASURE): other bits, the same
                # Jacobian up to rounding. Compared with the reference instead.
                for key, text in (("grad_in_memory", gim), ("compact", cpt)):
                    Jt = np.array([[float(v) for v in l.split()] for l in text.splitlines() if l.strip()])
                    e_t = relerr(Jt, Jref)[0] if Jt.shape == Jref.shape else float("inf")
                    res[key + "_err"] = e_t
                    res[key + "_same"] = e_t <= case.tol
            else:
                res["grad_in_memory_same"] = gim == file_text
                res["compact_same"] = cpt == file_text
            e_rev, w_rev = relerr(Jrev, Jref)
            e_fwd, w_fwd = relerr(Jfwd, Jref)
            res["got_rev"] = Jrev.ravel()[:4].tolist()
            res["got_fwd"] = Jfwd.ravel()[:4].tolist()
            res["expected"] = Jref.ravel()[:4].tolist()
            if w_rev is not None:
                res["worst_rev"] = [int(w_rev[0]), int(w_rev[1]), float(Jrev[w_rev]), float(Jref[w_rev])]
            if w_fwd is not None:
                res["worst_fwd"] = [int(w_fwd[0]), int(w_fwd[1]), float(Jfwd[w_fwd]), float(Jref[w_fwd])]
        else:
            JVf = sweep(rec, V, forward=True)                  # (m, K)
            WJ = sweep(rec, W, forward=False)                  # (n, K)
            wjv = np.einsum("nk,nk->k", WJ, V)
            wjv_ref = np.einsum("mk,mk->k", W, JV)
            e_fwd, w_fwd = relerr(JVf, JV)
            e_rev, _ = relerr(wjv, wjv_ref)
            res["got_rev"] = wjv.tolist()
            res["got_fwd"] = JVf[:2, 0].tolist()
            res["expected"] = wjv_ref.tolist()
            if w_fwd is not None:
                res["worst_fwd"] = [int(w_fwd[0]), int(w_fwd[1]), float(JVf[w_fwd]), float(JV[w_fwd])]
    except Exception as e:  # noqa: BLE001
        res.update(status="ERROR", detail=str(e))
        shutil.rmtree(rec, ignore_errors=True)
        return res
    shutil.rmtree(rec, ignore_errors=True)
    res["err_rev"], res["err_fwd"] = e_rev, e_fwd
    # Dot mode: J·v in the run for a few directions (unit vectors when
    # there are at most 3 inputs), against the reference.
    if os.environ.get("DIFFTEST_DOT", "1") != "0":
        try:
            if full:
                D = np.eye(n) if n <= 3 else rng.standard_normal((n, 3))
                D[:case.fixed, :] = 0.0
                ref_dot = Jref @ D
            else:
                D, ref_dot = V, JV
            got = np.zeros_like(ref_dot)
            for k in range(D.shape[1]):
                t, dot_err, yraw_dot = runner.dot(case, x0, venv, D[:, k])
                got[:, k] = t
                err_lines += [l for l in dot_err if l not in err_lines]
                # Against the recording's values: both run under the same
                # DGAD_CPUID, which may choose other kernels than natively.
                if yraw_dot != yraw_dgad:
                    res["values_identical"] = False
                    res["value_diff"] = "dot mode printed other values than record mode"
            e_dot, _ = relerr(got, ref_dot)
        except Exception as e:  # noqa: BLE001
            e_dot = float("inf")
            res["dot_detail"] = str(e)[:300]
        res["err_dot"] = e_dot
        res["stderr"] = err_lines[:3]
    else:
        e_dot = 0.0
    ok = e_rev <= case.tol and e_fwd <= case.tol and e_dot <= case.tol
    if res.get("grad_in_memory_same") is False:
        # The in-process sweep must be the file sweep, bit for bit.
        ok = False
        res["detail"] = "DGAD_GRAD=jacobian differs from dg-eval --jacobian on the tape"
    if res.get("compact_same") is False:
        # The compact tape must give dg-eval the same bits as dg-tape.
        ok = False
        res["detail"] = "the compact tape's Jacobian differs from dg-tape's"
    if size > MAX_RECORD_BYTES:
        res["note"] = "record dir exceeded 500 MB"
    if not res["values_identical"] and any(vname.endswith(" " + l) for l in case.values_vary):
        # the program's values vary between native runs too (cases.py: values_vary)
        res["note"] = ((res["note"] + "; ") if res.get("note") else "") + \
            "values not compared (vary natively): " + res.get("value_diff", "")
        res["values_identical"] = True
    if ok and res["values_identical"]:
        res["status"] = "PASS" if not err_lines else "PASS+stderr"
    elif ok:
        res["status"] = "VALUE-DIFF"
    else:
        res["status"] = "WRONG+stderr" if err_lines else "WRONG-SILENT"
    return res


def fmt(res):
    def f(v):
        return "%.3g" % v if isinstance(v, float) else str(v)
    s = "%-14s %-44s %-22s" % (res.get("status"), res["case"], res["variant"])
    if "err_rev" in res:
        s += " rev %-9s fwd %-9s dot %-9s tol %-7s ref %s" % (
            f(res["err_rev"]), f(res["err_fwd"]), f(res.get("err_dot", 0.0)), f(res["tol"]), res["ref"])
        if res.get("expected") and res.get("got_rev"):
            # first entry (full mode: d output0 / d input0; projection mode: w0^T J v0)
            s += " [expected %.10g got %.10g]" % (res["expected"][0], res["got_rev"][0])
        if "worst_rev" in res and res["err_rev"] > res["tol"]:
            s += " worstrev(i,j,got,exp)=%s" % res["worst_rev"]
        if "worst_fwd" in res and res["err_fwd"] > res["tol"]:
            s += " worstfwd=%s" % res["worst_fwd"]
        if not res.get("values_identical", True):
            s += " VALUES DIFFER (%s)" % res.get("value_diff", "")
    if res.get("note"):
        s += " (" + res["note"][:200] + ")"
    if res.get("detail"):
        s += " " + res["detail"][:300]
    if res.get("stderr"):
        s += "\n    stderr: " + " | ".join(res["stderr"])[:300]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-k", "--filter", action="append", default=[], help="substring of case names (repeatable)")
    ap.add_argument("--group", action="append", default=[], help="gsl lapack blas openblas eigen boost fftw libm fortran numpy scipy")
    ap.add_argument("--cpuid", default="avx2,native", help="DGAD_CPUID values (comma list)")
    ap.add_argument("--build", default=os.environ.get("DIFFTEST_BUILD", "/tmp/dgad-difftest/build"))
    ap.add_argument("--json", help="append results as JSON lines to this file")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--static", action="store_true",
                    help="link every client statically (NAME_static; run in dgad-static-host)")
    args = ap.parse_args()
    C.STATIC = args.static
    os.makedirs(args.build, exist_ok=True)
    allc = C.all_cases()
    sel = [c for c in allc if (not args.filter or any(f in c.name for f in args.filter))
           and (not args.group or c.group in args.group)]
    if args.list:
        for c in sel:
            print(c.group, c.name, c.variants_desc())
        return
    if not args.no_build:
        C.build(args.build, {c.client for c in sel})
    work = tempfile.mkdtemp(prefix="dgad-difftest-", dir="/tmp")
    runner = Runner(args.build, work)
    cpuids = [c for c in args.cpuid.split(",") if c]
    counts = {}
    jf = open(args.json, "a") if args.json else None
    try:
        for case in sel:
            for variant in case.variants(cpuids):
                res = run_case(runner, case, variant)
                counts[res["status"]] = counts.get(res["status"], 0) + 1
                print(fmt(res), flush=True)
                if jf:
                    jf.write(json.dumps(res, default=str) + "\n")
                    jf.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("summary:", ", ".join("%s %d" % kv for kv in sorted(counts.items())))


if __name__ == "__main__":
    main()
