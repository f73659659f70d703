#!/usr/bin/env python3
"""ab_solve.py -- two `ildl` binaries (A: before, B: after) on the same problems in one run,
alternating A, B per problem so that both see the same machine state; each `ildl solve
--repeat R` reports median setup, factor and solve times. Prints one row per problem and the
median B/A ratio of each time over the problems both solved; writes the records as JSON.

  python3 bench/ab_solve.py --a OLD/ildl --b NEW/ildl --out ab.json [--args "--backend cuda"]
      [--repeat 3] [--timeout 120] [--max-wall S] FILE.mtx[.gz] ...
  (--list FILE: problem paths, one per line, instead of or besides the arguments)

Standard library only. Times are the CLI's own (setup_s, factor_s, solve_s); iterations and
convergence are compared too: a problem where they differ is flagged."""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time


def run(binary, path, args, repeat, timeout):
    cmd = [binary, "solve", path, "--json", "--quiet", "--repeat", str(repeat)] + shlex.split(args)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return {"error": f"exit {p.returncode}: {p.stderr.strip()[-200:]}"}
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the 'before' ildl binary")
    ap.add_argument("--b", required=True, help="the 'after' ildl binary")
    ap.add_argument("--args", default="", help="more `ildl solve` arguments for both")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", default="ab.json")
    ap.add_argument("--list", help="a file of problem paths, one per line")
    ap.add_argument("--max-wall", type=float, default=0, help="start no problem after this many seconds")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = list(a.files)
    if a.list:
        files += [l.strip() for l in open(a.list) if l.strip() and not l.startswith("#")]
    recs = []
    keys = ("setup_s", "factor_s", "solve_s")
    print(f"{'problem':40s} {'it A':>6s} {'it B':>6s} " + " ".join(f"{k + ' B/A':>12s}" for k in keys))
    t0 = time.time()
    for f in files:
        if a.max_wall > 0 and time.time() - t0 > a.max_wall:
            print(f"--max-wall {a.max_wall:g} s reached: {len(files) - len(recs)} problems not run")
            break
        ra = run(a.a, f, a.args, a.repeat, a.timeout)
        rb = run(a.b, f, a.args, a.repeat, a.timeout)
        rec = {"problem": f, "a": ra, "b": rb}
        recs.append(rec)
        name = f.rsplit("/", 1)[-1]
        if "error" in ra or "error" in rb:
            print(f"{name:40s} error: A {ra.get('error', 'ok')} B {rb.get('error', 'ok')}")
            continue
        same = ra.get("iterations") == rb.get("iterations") and ra.get("converged") == rb.get("converged")
        rec["ratios"] = {k: rb[k] / ra[k] for k in keys if ra.get(k)}
        print(f"{name:40s} {ra.get('iterations', -1):6d} {rb.get('iterations', -1):6d} "
              + " ".join(f"{rec['ratios'].get(k, float('nan')):12.3f}" for k in keys)
              + ("" if same else "  DIFFERENT iterations or convergence"))
    both = [r for r in recs if "ratios" in r and r["a"].get("converged") and r["b"].get("converged")]
    summary = {k: statistics.median([r["ratios"][k] for r in both if k in r["ratios"]]) for k in keys} if both else {}
    print(f"median B/A over {len(both)} problems both solved: "
          + ", ".join(f"{k} {v:.3f}" for k, v in summary.items()))
    with open(a.out, "w") as fh:
        json.dump({"a": a.a, "b": a.b, "args": a.args, "repeat": a.repeat, "records": recs,
                   "median_ratio": summary}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
