#!/usr/bin/env python3
"""Tables of bench/fixed-point.sh's JSON lines (docs/methods.md): per matrix the level-scheduled
block-iLDL^T and the fixed-point method for each (eps, sweeps): iterations, the residual on the
pattern, factor and solve times, and a summary per configuration.
    python3 bench/fixed_point_table.py FILE.jsonl [DEFAULT_EPS DEFAULT_SWEEPS]"""
import json, os, statistics, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
d_eps = float(sys.argv[2]) if len(sys.argv) > 2 else None
d_k = int(sys.argv[3]) if len(sys.argv) > 3 else None
by, configs = {}, set()
for r in rows:
    m = os.path.basename(r['matrix']).replace('.mtx.gz', '')
    if r['method'] == 'ildl':
        by.setdefault(m, {})['ildl'] = r
    elif r['method'] == 'fixed-point':
        key = (r['fp_eps'], r['fp_sweeps'])
        configs.add(key)
        by.setdefault(m, {})[key] = r
configs = sorted(configs)
its = lambda r: (f"{r['iterations']}" + ("" if r['converged'] else " nc")) if r else "-"

# 1. iterations (and residual) against sweeps, per eps
for eps in sorted({e for e, _ in configs}):
    ks = [k for e, k in configs if e == eps]
    print(f"\n**eps = {eps:g}**: SQMR iterations (nc: not converged in 1000) and "
          "||A - U^T D U||_F / ||A||_F on the pattern after k sweeps\n")
    print("| matrix | n | levels | iLDLT its | " + " | ".join(f"k = {k}" for k in ks) + " |")
    print("|---|---|---|---|" + "---|" * len(ks))
    for m, d in by.items():
        i = d.get('ildl')
        if not i: continue
        cells = []
        for k in ks:
            r = d.get((eps, k))
            cells.append("-" if not r else f"{its(r)} ({r['fp_residual']:.1e})")
        print(f"| {m} | {i['n']} | {i['levels']} | {its(i)} | " + " | ".join(cells) + " |")

# 2. per configuration: converged, median iterations ratio, time
print("\n| configuration | converged | both | median its ratio | median factor ratio | median (factor + solve) ratio | faster |")
print("|---|---|---|---|---|---|---|")
n_ildl = sum(1 for d in by.values() if d.get('ildl') and d['ildl']['converged'])
print(f"| level-scheduled iLDLT | {n_ildl} of {len(by)} | | | | | |")
for key in configs:
    conv = both = faster = 0
    ri, rf, rt = [], [], []
    for m, d in by.items():
        i, r = d.get('ildl'), d.get(key)
        if not i or not r: continue
        conv += bool(r['converged'])
        if i['converged'] and r['converged']:
            both += 1
            ri.append(r['iterations'] / max(i['iterations'], 1))
            rf.append(r['factor_s'] / i['factor_s'])
            t = (r['factor_s'] + r['solve_s']) / (i['factor_s'] + i['solve_s'])
            rt.append(t)
            faster += t < 1
    med = lambda v: f"{statistics.median(v):.2f}" if v else "-"
    print(f"| eps {key[0]:g}, {key[1]} sweeps | {conv} | {both} | {med(ri)} | {med(rf)} | {med(rt)} | {faster} |")

# 3. times of one configuration against the level-scheduled factor
if d_eps is not None and d_k is not None:
    print(f"\n**eps = {d_eps:g}, {d_k} sweeps** against the level-scheduled factor (seconds, medians)\n")
    print("| matrix | levels | iLDLT its | factor | solve | FP its | FP factor | FP solve | FP / iLDLT (factor + solve) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m, d in by.items():
        i, r = d.get('ildl'), d.get((d_eps, d_k))
        if not i or not r: continue
        ratio = ""
        if i['converged'] and r['converged']:
            ratio = f"{(r['factor_s'] + r['solve_s']) / (i['factor_s'] + i['solve_s']):.2f}"
        print(f"| {m} | {i['levels']} | {its(i)} | {i['factor_s']:.4f} | {i['solve_s']:.4f} | {its(r)} | "
              f"{r['factor_s']:.4f} | {r['solve_s']:.4f} | {ratio} |")
