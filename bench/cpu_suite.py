#!/usr/bin/env python3
"""cpu_suite.py -- run `ildl solve` (CPU backend) over the shared matrices and report.

  run     run one parameter set, or the cartesian grid of several values per key, over the
          matrices; JOBS processes at a time, each single-threaded, each with a timeout
          (a timeout counts as not converged). Records append to RESULTS/<name>.jsonl; a
          (matrix, parameters) pair already recorded there is skipped, so a run can resume.
  summary print, per parameter set of a results file, how many matrices converged and the
          total time (converged first, then total time), to pick finalists.
  render  write docs/results-cpu.md from a defaults run and any number of grid runs: the
          defaults table, the per-matrix best setting table and the counts.

Parameters are given as KEY=V1,V2,... with the keys of PARAM_FLAGS; a key left out takes
the library default (the run records the defaults it was built with as given by
`ildl --help`, so records stay meaningful after the defaults change).

Examples
  bench/cpu_suite.py run --name defaults
  bench/cpu_suite.py run --name screen --subset screen --set bthr=0.8,0.5,0.3 --set blocking=rb,br
  bench/cpu_suite.py summary --name screen
  bench/cpu_suite.py render --defaults defaults --grid screen --grid final
"""
import argparse
import datetime
import glob
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEF_ILDL = os.path.join(ROOT, "build-tune", "tools", "ildl")
DEF_RESULTS = os.path.join(ROOT, "build-tune", "results")
DEF_MATRICES = "/work/shared/matrices"
DEF_DOC = os.path.join(ROOT, "docs", "results-cpu.md")

# short key -> (ildl flag, python type); order = column order in the tables
PARAM_FLAGS = {
    "blocking": ("--blocking", str),
    "ordering": ("--ordering", str),
    "bthr": ("--block-threshold", float),
    "bs": ("--block-size", int),
    "lf": ("--fill-level", int),
    "rf": ("--fill-factor", float),
    "tau": ("--threshold", float),
    "pivot": ("--pivot", str),
    "scaling": ("--scaling", str),
}

# subsets for coarse screens: HARD = the matrices the original defaults (RB 0.8, AMD, l_f 1,
# r_f 8, tau 1e-4, rook) did not solve; SCREEN adds a few solved ones of several families
# (slow-converging, large, PDE saddle point) to catch regressions
HARD = [
    "bratu3d", "stokes64", "tuma2", "tuma1", "cvxqp3", "ncvxqp1", "maxwell_homogeneous4",
    "synthetic_m2d100-001", "synthetic_m3d20-001", "sqd_cvxqp1_m_2x2_it10",
    "sqd_cvxqp2_m_2x2_it10", "sqd_cvxqp3_m_2x2_it10", "sqd_cvxqp3_m_3x3_it10",
    "sqd_mosarqp1_2x2_it5", "sqd_mosarqp1_3x3_it5", "sqd_mosarqp2_2x2_it5",
    "acopf_ACTIVSg200_it00_kkt", "acopf_ACTIVSg200_it10_kkt",
]
SCREEN = HARD + [
    "sqd_aug2d_2x2_it5", "sqd_qpcstair_2x2_it10", "cutest_kkt_HYDCAR20_0000", "aug3dcqp",
    "bloweya", "sqd_stcqp1_2x2_it10",
]


# --threads reaches only the factorisation; the solve's OpenMP loops take OMP_NUM_THREADS,
# and two runs side by side with two spinning threads each slow each other down tenfold
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")


def matrix_name(path):
    return os.path.basename(path).replace(".mtx.gz", "").replace(".mtx", "")


def list_matrices(mdir, subset):
    files = sorted(glob.glob(os.path.join(mdir, "*.mtx.gz")))
    if subset == "all":
        return files
    names = {"screen": SCREEN, "hard": HARD}.get(subset) or subset.split(",")
    byname = {matrix_name(f): f for f in files}
    missing = [x for x in names if x not in byname]
    if missing:
        sys.exit("unknown matrices: " + ", ".join(missing))
    return [byname[x] for x in names]


def library_defaults(ildl):
    """The defaults of the binary, parsed from `ildl --help` ('[value]' after each option)."""
    out = subprocess.run([ildl, "--help"], capture_output=True, text=True).stdout
    d = {}
    for key, (flag, typ) in PARAM_FLAGS.items():
        m = re.search(re.escape(flag) + r"\s+\S+.*?\[([^\]]*)\]", out)
        if m:
            d[key] = typ(m.group(1))
    return d


def canon(params):
    """Canonical string of a parameter set, in PARAM_FLAGS order."""
    return " ".join("%s=%s" % (k, params[k]) for k in PARAM_FLAGS if k in params)


def parse_sets(sets):
    grid = {}
    for s in sets or []:
        key, _, vals = s.partition("=")
        if key not in PARAM_FLAGS or not vals:
            sys.exit("bad --set %r (keys: %s)" % (s, ", ".join(PARAM_FLAGS)))
        typ = PARAM_FLAGS[key][1]
        grid[key] = [typ(v) for v in vals.split(",")]
    return grid


def expand(grid, defaults):
    keys = list(grid)
    for combo in itertools.product(*(grid[k] for k in keys)):
        p = dict(defaults)
        p.update(zip(keys, combo))
        yield p


def run_one(ildl, path, params, timeout, maxit):
    cmd = [ildl, "solve", path, "--backend", "cpu", "--threads", "1", "--maxit", str(maxit),
           "--json", "--quiet"]
    for k, v in params.items():
        cmd += [PARAM_FLAGS[k][0], str(v)]
    rec = {"name": matrix_name(path), "params": params, "key": canon(params)}
    t0 = time.time()
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)
        rec["exit"] = cp.returncode
        rec["timeout"] = False
        lines = [x for x in cp.stdout.splitlines() if x.startswith("{")]
        rec["ildl"] = json.loads(lines[-1]) if lines else None
        if not lines:
            rec["stderr"] = cp.stderr[-500:]
    except subprocess.TimeoutExpired:
        rec.update(exit=None, timeout=True, ildl=None)
    rec["wall_s"] = round(time.time() - t0, 3)
    j = rec["ildl"] or {}
    rec["converged"] = bool(j.get("converged")) and not rec["timeout"]
    return rec


def load(results, name):
    path = os.path.join(results, name + ".jsonl")
    recs = []
    if os.path.exists(path):
        with open(path) as f:
            recs = [json.loads(x) for x in f if x.strip()]
    return recs


def cmd_run(a):
    os.makedirs(a.results, exist_ok=True)
    defaults = library_defaults(a.ildl)
    grid = parse_sets(a.set)
    psets = list(expand(grid, defaults)) if grid else [dict(defaults)]
    mats = list_matrices(a.matrices, a.subset)
    done = {(r["name"], r["key"]) for r in load(a.results, a.name)}
    todo = [(m, p) for p in psets for m in mats if (matrix_name(m), canon(p)) not in done]
    print("%d parameter sets x %d matrices: %d runs to do (%d recorded)" %
          (len(psets), len(mats), len(todo), len(psets) * len(mats) - len(todo)), flush=True)
    out = open(os.path.join(a.results, a.name + ".jsonl"), "a")
    t0 = time.time()
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(run_one, a.ildl, m, p, a.timeout, a.maxit) for m, p in todo]
        for i, f in enumerate(futs):
            r = f.result()
            out.write(json.dumps(r) + "\n")
            out.flush()
            if not a.quiet:
                j = r["ildl"] or {}
                print("[%d/%d %.0fs] %-34s %-70s %s it=%s res=%s %.1fs" % (
                    i + 1, len(todo), time.time() - t0, r["name"], r["key"],
                    "OK " if r["converged"] else ("T/O" if r["timeout"] else "no "),
                    j.get("iterations"), j.get("true_residual"), r["wall_s"]), flush=True)
    out.close()
    print("done in %.0f s" % (time.time() - t0))


def total_time(r):
    j = r["ildl"] or {}
    if r["timeout"] or not j:
        return r["wall_s"]
    return sum(j.get(k) or 0.0 for k in ("setup_s", "factor_s", "solve_s"))


def by_setting(recs):
    sets = {}
    for r in recs:
        sets.setdefault(r["key"], {})[r["name"]] = r  # the last record of a pair wins
    return sets


def cmd_summary(a):
    recs = []
    for n in a.name:
        recs += load(a.results, n)
    sets = by_setting(recs)
    rows = []
    for key, per in sets.items():
        conv = [r for r in per.values() if r["converged"]]
        tt = sum(total_time(r) for r in per.values())
        rows.append((-len(conv), tt, key, len(per), sorted(x["name"] for x in per.values() if not x["converged"])))
    rows.sort()
    for negc, tt, key, cnt, fails in rows[: a.top]:
        print("%3d/%-3d %8.1fs  %s" % (-negc, cnt, tt, key))
        if a.fails:
            print("          not converged: " + " ".join(fails))


# ---------------------------------------------------------------- render

def fmt_s(x):
    return "-" if x is None else ("%.3f" % x if x < 10 else "%.1f" % x)


def fmt_e(x):
    return "-" if x is None else "%.1e" % x


def row_cells(r, key_cols):
    j = r["ildl"] or {}
    n = j.get("n")
    blocks = j.get("blocks")
    mean = ("%.2f" % (n / blocks)) if n and blocks else "-"
    phases = {k: j.get(k + "_s") for k in ("setup", "factor", "solve")}
    known = {k: v for k, v in phases.items() if v is not None}
    slowest = max(known, key=known.get) if known and not r["timeout"] else "-"
    if r["timeout"]:
        status = "timeout"
    elif r["converged"]:
        status = "yes"
    elif j.get("status_code") not in (None, 0, -17, 17) and j.get("status") not in (None, "success"):
        status = "no (%s)" % j.get("status")
    else:
        status = "no"
    cells = [r["name"], str(n or "-"), str(j.get("nnz", "-"))]
    cells += [str(r["params"].get(k, "-")) for k in key_cols]
    cells += [str(blocks if blocks is not None else "-"), mean, str(j.get("levels", "-")),
              str(j.get("perturbed", "-")), str(j.get("pivots_2x2", "-")),
              fmt_s(phases["setup"]), fmt_s(phases["factor"]), fmt_s(phases["solve"]), slowest,
              str(j.get("iterations", "-")), fmt_e(j.get("true_residual")), status]
    return cells


def table(rows, key_cols):
    head = ["matrix", "n", "nnz"] + key_cols + ["blocks", "mean bs", "levels", "perturbed",
                                                "2x2", "setup s", "factor s", "solve s",
                                                "slowest", "iters", "true res", "converged"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(row_cells(r, key_cols)) + " |")
    return "\n".join(out)


def best_of(recs):
    """Per matrix: the converged record of least total time, else the least residual."""
    best = {}
    for r in recs:
        cur = best.get(r["name"])
        if cur is None or rank(r) < rank(cur):
            best[r["name"]] = r
    return best


def rank(r):
    j = r["ildl"] or {}
    res = j.get("true_residual")
    if r["converged"]:
        return (0, total_time(r))
    return (1, res if res is not None else float("inf"))


def cmd_render(a):
    drecs = load(a.results, a.defaults)
    if not drecs:
        sys.exit("no records in %s.jsonl" % a.defaults)
    dset = by_setting(drecs)
    dkey = canon(library_defaults(a.ildl))
    if dkey not in dset:
        sys.exit("the defaults run has no records for the current defaults (%s)" % dkey)
    drows = sorted(dset[dkey].values(), key=lambda r: r["name"])
    grecs = list(drecs)
    for g in a.grid:
        grecs += load(a.results, g)
    gsets = by_setting(grecs)
    best = best_of([r for per in gsets.values() for r in per.values()])
    brows = [best[k] for k in sorted(best)]
    nd = sum(r["converged"] for r in drows)
    nb = sum(r["converged"] for r in brows)
    # settings ranked over the matrices each was run on
    ranking = []
    for key, per in gsets.items():
        ranking.append((-sum(r["converged"] for r in per.values()),
                        sum(total_time(r) for r in per.values()), key, len(per)))
    ranking.sort()
    full = [x for x in ranking if x[3] == len(drows)]
    slow = {}
    for r in drows:
        c = row_cells(r, [])
        slow[c[-4]] = slow.get(c[-4], 0) + 1
    host = platform.node()
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    nproc = os.cpu_count()
    cmdline = "python3 bench/cpu_suite.py render --defaults %s %s" % (
        a.defaults, " ".join("--grid " + g for g in a.grid))
    dcols = []
    bcols = list(PARAM_FLAGS)
    lines = []
    lines.append("# CPU results on the shared matrices")
    lines.append("")
    lines.append("Generated by `bench/cpu_suite.py`; do not edit the tables by hand.")
    lines.append("")
    lines.append("- machine: %s, `nproc` = %d (%s), each run single-threaded (`--threads 1`), "
                 "%d runs at a time" % (cpu, nproc, host, a.jobs))
    lines.append("- date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    lines.append("- regenerate: `python3 bench/cpu_suite.py run --name %s` (defaults), the grid runs "
                 "listed in docs/blocking-notes.md, then `%s`" % (a.defaults, cmdline))
    lines.append("- protocol: b = A*1, SQMR to true relative residual <= 1e-6 on the original "
                 "system within %d iterations, per-run timeout %d s (a timeout counts as not "
                 "converged); `mean bs` = n / blocks; `slowest` = the largest of setup, factor "
                 "and solve time; times in seconds" % (a.maxit, a.timeout))
    lines.append("")
    lines.append("## Summary")
    lines.append("")
    lines.append("| | converged (of %d) |" % len(drows))
    lines.append("|---|---|")
    lines.append("| defaults (`%s`) | %d |" % (dkey, nd))
    lines.append("| best per-matrix setting (%d settings tried) | %d |" % (len(gsets), nb))
    lines.append("")
    lines.append("Slowest phase with the defaults: " +
                 ", ".join("%s on %d matrices" % (k, v) for k, v in sorted(slow.items(), key=lambda x: -x[1])) + ".")
    lines.append("")
    if full:
        lines.append("### Settings run on all %d matrices" % len(drows))
        lines.append("")
        lines.append("| setting | converged | total time s |")
        lines.append("|---|---|---|")
        for negc, tt, key, cnt in full:
            lines.append("| `%s` | %d | %.1f |" % (key, -negc, tt))
        lines.append("")
    lines.append("## Defaults on all matrices")
    lines.append("")
    lines.append("Defaults: `%s` (`ildl --help` of the binary that ran)." % dkey)
    lines.append("")
    lines.append(table(drows, dcols))
    lines.append("")
    lines.append("## Best setting per matrix")
    lines.append("")
    lines.append("Over every setting recorded for the matrix in the runs named above: the "
                 "converged run of least setup + factor + solve time, else the run of least "
                 "true residual.")
    lines.append("")
    lines.append(table(brows, bcols))
    lines.append("")
    if a.prose and os.path.exists(a.prose):
        with open(a.prose) as f:
            lines.append(f.read().rstrip())
            lines.append("")
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print("wrote %s: defaults %d/%d, per-matrix best %d/%d" % (a.out, nd, len(drows), nb, len(brows)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ildl", default=DEF_ILDL)
    ap.add_argument("--results", default=DEF_RESULTS)
    ap.add_argument("--matrices", default=DEF_MATRICES)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--maxit", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--name", required=True, help="results file RESULTS/NAME.jsonl")
    r.add_argument("--subset", default="all", help="all, screen, hard, or a comma list of matrix names")
    r.add_argument("--set", action="append", help="KEY=V1,V2,... (keys: %s)" % ", ".join(PARAM_FLAGS))
    r.add_argument("--quiet", action="store_true")
    s = sub.add_parser("summary")
    s.add_argument("--name", action="append", required=True)
    s.add_argument("--top", type=int, default=30)
    s.add_argument("--fails", action="store_true")
    d = sub.add_parser("render")
    d.add_argument("--defaults", default="defaults")
    d.add_argument("--grid", action="append", default=[])
    d.add_argument("--out", default=DEF_DOC)
    d.add_argument("--prose", help="markdown appended after the tables (notes written by hand)")
    a = ap.parse_args()
    {"run": cmd_run, "summary": cmd_summary, "render": cmd_render}[a.cmd](a)


if __name__ == "__main__":
    main()
