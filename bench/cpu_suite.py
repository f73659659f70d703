#!/usr/bin/env python3
"""cpu_suite.py -- run `ildl solve` (CPU backend) over the shared matrices and report.

  run      run one parameter set, or the cartesian grid of several values per key, over
           the matrices; JOBS processes at a time, each single-threaded, each with a
           timeout (a timeout counts as not converged). Records append to
           RESULTS/<name>.jsonl; a (matrix, setting) pair already recorded there is
           skipped, so an interrupted run resumes. --best-of re-runs, per matrix, the best
           setting recorded in other runs (a re-run supersedes older records).
  summary  per setting of some results files: matrices converged and total time, best first.
  sweep    the whole study behind docs/results-cpu.md (the plan in SWEEP below), then render.
  render   write docs/results-cpu.md from the recorded runs.

A setting is KEY=V1,V2,... per --set, keys as in PARAM_FLAGS; a key left out takes the
default of the binary (read from `ildl --help`), and every run passes all keys explicitly,
so records stay meaningful after the defaults change.

Examples
  python3 bench/cpu_suite.py run --name defaults
  python3 bench/cpu_suite.py --timeout 30 run --name screen --subset screen \\
          --set blocking=rb,br --set bthr=0.8,0.3,0.0
  python3 bench/cpu_suite.py summary --name screen --fails
  python3 bench/cpu_suite.py sweep          # everything, about 30 min on 2 cores
  python3 bench/cpu_suite.py render         # the markdown from what is recorded
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

# short key -> (ildl flag, python type); also the column order of the tables
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

# the defaults before this study, for the comparison row of the summary
OLD_DEFAULTS = {"blocking": "rb", "ordering": "amd", "bthr": 0.8, "bs": 32, "lf": 1, "rf": 8.0,
                "tau": 1e-4, "pivot": "rook", "scaling": "equilibrate"}

# HARD = the matrices the old defaults did not solve; SCREEN adds solved ones of several
# families (slow-converging, large, PDE saddle point) so that a screen sees regressions
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

# The study: (results name, subset, timeout s, --set list). Every entry names the keys it
# varies explicitly, so the plan means the same whatever the binary's defaults are. Stages 1
# and 3 ran before matching-based scaling existed, hence scaling=equilibrate there.
_B = ["bthr=0.0", "scaling=equilibrate"]
_E = ["scaling=equilibrate"]
SWEEP = [
    # 1. screen: blocking rule and threshold, orderings, then one factor at a time
    ("screen", "screen", 30, _E + ["blocking=rb,br", "bthr=0.8,0.5,0.3,0.1,0.0", "lf=1"]),
    ("screen", "screen", 30, _E + ["blocking=rb,br", "bthr=0.0", "ordering=metis,rcm", "lf=1"]),
    ("screen", "screen", 30, _E + ["blocking=br", "bthr=0.3", "ordering=metis,rcm", "lf=1"]),
    ("screen", "screen", 30, _B + ["lf=0,1,2,3"]),
    ("screen", "screen", 30, _B + ["lf=1", "rf=4,16"]),
    ("screen", "screen", 30, _B + ["lf=1", "tau=0.01,1e-6"]),
    ("screen", "screen", 30, _B + ["lf=1", "pivot=bk"]),
    ("screen", "screen", 30, _B + ["lf=2", "pivot=bk"]),
    ("screen", "screen", 30, _B + ["lf=2", "tau=1e-3,1e-5"]),
    ("screen", "screen", 30, _B + ["lf=2", "rf=6,12"]),
    ("screen", "screen", 30, _E + ["blocking=br", "bthr=0.3,0.1", "lf=2"]),
    ("screen", "screen", 30, _B + ["lf=2", "ordering=metis"]),
    # 2. finalists and references on all matrices
    ("defaults", "all", 60, []),
    ("full", "all", 60, _E + ["bthr=0.8", "lf=1"]),
    ("full", "all", 60, _E + ["blocking=br", "bthr=0.3", "lf=1"]),
    ("full", "all", 60, _B + ["lf=1,2,3"]),
    ("full", "all", 60, ["bthr=0.0", "scaling=matching", "lf=1,2,3"]),
    ("full", "all", 60, ["bthr=0.0", "scaling=matching", "lf=1", "pivot=bk"]),
    ("full", "all", 60, ["bthr=0.0", "scaling=matching", "lf=1", "tau=1e-5,1e-3"]),
    # 3. heavier settings for the matrices the finalists leave unsolved
    ("hard", "bratu3d,cvxqp3,synthetic_m3d20-001", 60,
     _B + ["lf=3", "rf=16,32", "tau=1e-4,1e-6", "pivot=rook,bk"]),
    ("hard", "bratu3d,cvxqp3,synthetic_m3d20-001", 60,
     _E + ["blocking=br", "bthr=0.3", "lf=3", "rf=16,32"]),
    ("hard", "bratu3d,synthetic_m3d20-001", 90,
     _E + ["blocking=rb,br", "bthr=0.0", "lf=10", "rf=0", "tau=1e-8"]),
    ("hard", "ncvxqp1", 60, _B + ["lf=3,4", "rf=8,12,16"]),
    ("hard", "ncvxqp1", 60, _B + ["lf=2", "tau=1e-6,1e-3", "pivot=rook,bk"]),
    ("hard", "ncvxqp1", 60, _E + ["blocking=br", "bthr=0.3,0.8", "lf=2"]),
]
EXPLORED = ["screen", "full", "hard"]

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
    """The defaults of the binary, parsed from `ildl --help` ('[value]' ending an option line)."""
    out = subprocess.run([ildl, "--help"], capture_output=True, text=True).stdout
    d = {}
    for key, (flag, typ) in PARAM_FLAGS.items():
        m = re.search(r"^\s+" + re.escape(flag) + r"\s+\S+[^\n]*\[([^\]]*)\]\s*$", out, re.M)
        if not m:
            sys.exit("cannot read the default of %s from `%s --help`" % (flag, ildl))
        d[key] = typ(m.group(1))
    return d


def canon(params):
    """Canonical string of a setting, in PARAM_FLAGS order."""
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
    rec["timeout_s"] = timeout
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


def load_many(results, names):
    recs = []
    for n in names:
        recs += load(results, n)
    return recs


def total_time(r):
    j = r["ildl"] or {}
    if r["timeout"] or not j:
        return r["wall_s"]
    return sum(j.get(k) or 0.0 for k in ("setup_s", "factor_s", "solve_s"))


def rank(r):
    """Smaller is better: converged by total time, then the rest by true residual."""
    j = r["ildl"] or {}
    res = j.get("true_residual")
    if r["converged"]:
        return (0, total_time(r))
    return (1, res if res is not None else float("inf"))


def latest(recs):
    """Of several records of one (matrix, setting) the last: a re-run supersedes."""
    last = {}
    for r in recs:
        last[(r["name"], r["key"])] = r
    return list(last.values())


def best_of(recs):
    best = {}
    for r in latest(recs):
        cur = best.get(r["name"])
        if cur is None or rank(r) < rank(cur):
            best[r["name"]] = r
    return best


def by_setting(recs):
    sets = {}
    for r in latest(recs):
        sets.setdefault(r["key"], {})[r["name"]] = r
    return sets


def do_run(a, name, subset, sets, timeout, best_from=None):
    os.makedirs(a.results, exist_ok=True)
    defaults = library_defaults(a.ildl)
    mats = list_matrices(a.matrices, subset)
    done = {(r["name"], r["key"]) for r in load(a.results, name)}
    if best_from:
        best = best_of(load_many(a.results, best_from))
        pairs = [(m, best[matrix_name(m)]["params"]) for m in mats if matrix_name(m) in best]
    else:
        grid = parse_sets(sets)
        psets = list(expand(grid, defaults)) if grid else [dict(defaults)]
        pairs = [(m, p) for p in psets for m in mats]
    todo = [(m, p) for m, p in pairs if (matrix_name(m), canon(p)) not in done]
    print("%s: %d runs to do (%d recorded)" % (name, len(todo), len(pairs) - len(todo)), flush=True)
    t0 = time.time()
    with open(os.path.join(a.results, name + ".jsonl"), "a") as out, \
            ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(run_one, a.ildl, m, p, timeout, a.maxit) for m, p in todo]
        for i, f in enumerate(futs):
            r = f.result()
            out.write(json.dumps(r) + "\n")
            out.flush()
            if not a.quiet:
                j = r["ildl"] or {}
                print("[%d/%d %.0fs] %-28s %s: %s it=%s res=%s %.1fs" % (
                    i + 1, len(todo), time.time() - t0, r["name"], r["key"],
                    "OK" if r["converged"] else ("timeout" if r["timeout"] else "no"),
                    j.get("iterations"), j.get("true_residual"), r["wall_s"]), flush=True)
    print("%s: done in %.0f s" % (name, time.time() - t0), flush=True)
    return len(todo)


def cmd_run(a):
    do_run(a, a.name, a.subset, a.set, a.timeout, a.best_of)


def cmd_summary(a):
    sets = by_setting(load_many(a.results, a.name))
    rows = []
    for key, per in sets.items():
        rows.append((-sum(r["converged"] for r in per.values()),
                     sum(total_time(r) for r in per.values()), key, len(per),
                     sorted(x["name"] for x in per.values() if not x["converged"])))
    rows.sort()
    for negc, tt, key, cnt, fails in rows[: a.top]:
        print("%3d/%-3d %8.1fs  %s" % (-negc, cnt, tt, key))
        if a.fails:
            print("          not converged: " + " ".join(fails))


def cmd_sweep(a):
    t0 = time.time()
    for name, subset, timeout, sets in SWEEP:
        do_run(a, name, subset, sets, timeout)
    # per matrix, re-run the best setting found until the choice is stable: a re-run
    # that no longer converges hands the matrix to its next best setting
    for _ in range(5):
        if do_run(a, "best", "all", None, 90, EXPLORED + ["defaults", "best"]) == 0:
            break
    print("sweep: %.0f s" % (time.time() - t0))
    render(a)


# ---------------------------------------------------------------- render

def fmt_s(x):
    return "-" if x is None else ("%.3f" % x if x < 10 else "%.1f" % x)


def fmt_e(x):
    return "-" if x is None else "%.1e" % x


def slowest_phase(r):
    j = r["ildl"] or {}
    if r["timeout"]:
        return "timeout"
    ph = {k: j.get(k + "_s") for k in ("setup", "factor", "solve") if j.get(k + "_s") is not None}
    return max(ph, key=ph.get) if ph else "-"


def diff_setting(params, defaults):
    d = [("%s=%s" % (k, params[k])) for k in PARAM_FLAGS if params.get(k) != defaults.get(k)]
    return " ".join(d) if d else "defaults"


def row_cells(r, defaults):
    j = r["ildl"] or {}
    n, blocks = j.get("n"), j.get("blocks")
    if r["timeout"]:
        status = "no (timeout %ss)" % r.get("timeout_s", "?")
    elif r["converged"]:
        status = "yes"
    else:
        status = "no"
    cells = [r["name"], str(n or "-"), str(j.get("nnz", "-"))]
    if defaults is not None:
        cells.append(diff_setting(r["params"], defaults))
    cells += [str(blocks if blocks is not None else "-"),
              ("%.1f" % (n / blocks)) if n and blocks else "-",
              str(j.get("levels", "-")), str(j.get("perturbed", "-")), str(j.get("pivots_2x2", "-")),
              fmt_s(j.get("setup_s")), fmt_s(j.get("factor_s")), fmt_s(j.get("solve_s")),
              slowest_phase(r), str(j.get("iterations", "-")), fmt_e(j.get("true_residual")), status]
    return cells


def table(rows, defaults=None):
    head = ["matrix", "n", "nnz"] + (["setting (vs defaults)"] if defaults is not None else [])
    head += ["blocks", "mean bs", "levels", "perturbed", "2x2", "setup s", "factor s",
             "solve s", "slowest", "iters", "true res", "converged"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(row_cells(r, defaults)) + " |")
    return "\n".join(out)


def ranking(sets, nmat=None):
    rows = []
    for key, per in sets.items():
        if nmat is not None and len(per) != nmat:
            continue
        rows.append((-sum(r["converged"] for r in per.values()),
                     sum(total_time(r) for r in per.values()), key, len(per)))
    rows.sort()
    return rows


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, `nproc` = %d, %s" % (cpu, os.cpu_count(), platform.system())


def render(a):
    defaults = library_defaults(a.ildl)
    dkey = canon(defaults)
    dset = by_setting(load(a.results, "defaults"))
    if dkey not in dset:
        sys.exit("defaults.jsonl has no records for the current defaults (%s)" % dkey)
    drows = sorted(dset[dkey].values(), key=lambda r: r["name"])
    nmat = len(drows)
    explored = load_many(a.results, EXPLORED)
    allrecs = explored + load(a.results, "defaults")
    sets = by_setting(allrecs)
    bestrecs = load(a.results, "best") + load(a.results, "defaults")
    best = best_of(bestrecs)
    brows = [best[k] for k in sorted(best)]
    nd = sum(r["converged"] for r in drows)
    nb = sum(r["converged"] for r in brows)
    okey = canon(OLD_DEFAULTS)
    nold = sum(r["converged"] for r in sets.get(okey, {}).values())
    slow = {}
    for r in drows:
        slow[slowest_phase(r)] = slow.get(slowest_phase(r), 0) + 1
    L = []
    L += ["# CPU results on the shared matrices", "",
          "Written by `bench/cpu_suite.py render`; the tables are generated, do not edit them. "
          "How the defaults were chosen and why some matrices fail: "
          "[blocking-notes.md](blocking-notes.md). \"defaults\" below are the defaults of that study "
          "(RB blocking); the library's default is now BR with the same 67/70 (blocking-notes.md, last "
          "section).", "",
          "- machine: %s; every run single-threaded (`--threads 1`, `OMP_NUM_THREADS=1`), "
          "%d runs side by side, on a machine shared with other work (times are indicative)"
          % (machine(), a.jobs),
          "- date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
          "- regenerated with `python3 bench/cpu_suite.py sweep` (all runs of the plan `SWEEP` "
          "in that script, then the re-runs of the best setting per matrix, then "
          "`python3 bench/cpu_suite.py render`); results in `build-tune/results/*.jsonl`",
          "- protocol: `ildl solve --backend cpu`, b = A*1, SQMR until the true relative "
          "residual on the original system is <= 1e-6, at most %d iterations; a run past its "
          "timeout (30 s in the screen, 60-90 s otherwise) counts as not converged. `mean bs` = "
          "n / blocks; `perturbed` = near-zero pivots replaced; `2x2` = 2x2 pivots; `slowest` = "
          "the largest of setup, factor and solve time (s)" % a.maxit, ""]
    L += ["## Summary", "",
          "| | converged (of %d) |" % nmat, "|---|---|",
          "| defaults `%s` | %d |" % (dkey, nd),
          "| best setting per matrix (%d settings explored, %d runs) | %d |"
          % (len(sets), len(latest(allrecs)), nb)]
    if nold:
        L.append("| old defaults `%s` | %d |" % (okey, nold))
    L += ["", "Slowest phase with the defaults: " + ", ".join(
        "%s on %d matrices" % (k, v) for k, v in sorted(slow.items(), key=lambda x: -x[1])) + ".", ""]
    def short(key, sets_):
        per = sets_[key]
        return diff_setting(next(iter(per.values()))["params"], defaults)

    L += ["### Settings run on all %d matrices" % nmat, "",
          "Settings are written as their difference from the defaults; total time = the sum "
          "of setup + factor + solve over the matrices (the timeout for a run past it).", "",
          "| setting | converged | total time s |", "|---|---|---|"]
    for negc, tt, key, cnt in ranking(sets, nmat):
        L.append("| `%s` | %d | %.1f |" % (short(key, sets), -negc, tt))
    ssets = by_setting(load(a.results, "screen"))
    scr = ranking(ssets, len(SCREEN))
    if scr:
        L += ["", "### Screen on %d matrices" % len(SCREEN), "",
              "The %d matrices the old defaults failed on (%s) plus %d they solved (%s); "
              "timeout 30 s. Recorded while other parts of the library still changed, so "
              "single borderline runs may differ from the final binary."
              % (len(HARD), ", ".join(HARD), len(SCREEN) - len(HARD), ", ".join(SCREEN[len(HARD):])),
              "", "| setting | converged | total time s |", "|---|---|---|"]
        for negc, tt, key, cnt in scr:
            L.append("| `%s` | %d | %.1f |" % (short(key, ssets), -negc, tt))
    L += ["", "## Defaults on all matrices", "", "Setting: `%s`." % dkey, "", table(drows), ""]
    L += ["## Best setting per matrix", "",
          "Per matrix, the setting that converged in the least setup + factor + solve time "
          "among all explored (else the one with the least true residual), re-run with this "
          "binary; `setting` lists what differs from the defaults.", "",
          table(brows, defaults), ""]
    with open(a.out, "w") as f:
        f.write("\n".join(L))
    print("wrote %s: defaults %d/%d, best per matrix %d/%d" % (a.out, nd, nmat, nb, len(brows)))


def cmd_render(a):
    render(a)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ildl", default=DEF_ILDL)
    ap.add_argument("--results", default=DEF_RESULTS)
    ap.add_argument("--matrices", default=DEF_MATRICES)
    ap.add_argument("--timeout", type=int, default=60, help="per run (run only)")
    ap.add_argument("--maxit", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--out", default=DEF_DOC)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--name", required=True, help="results file RESULTS/NAME.jsonl")
    r.add_argument("--subset", default="all", help="all, screen, hard, or a comma list of matrix names")
    r.add_argument("--set", action="append", help="KEY=V1,V2,... (keys: %s)" % ", ".join(PARAM_FLAGS))
    r.add_argument("--best-of", action="append",
                   help="instead of --set: per matrix, re-run the best setting of these runs")
    s = sub.add_parser("summary")
    s.add_argument("--name", action="append", required=True)
    s.add_argument("--top", type=int, default=30)
    s.add_argument("--fails", action="store_true")
    sub.add_parser("sweep")
    sub.add_parser("render")
    a = ap.parse_args()
    {"run": cmd_run, "summary": cmd_summary, "sweep": cmd_sweep, "render": cmd_render}[a.cmd](a)


if __name__ == "__main__":
    main()
