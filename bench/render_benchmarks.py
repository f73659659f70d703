#!/usr/bin/env python3
"""Render docs/benchmarks.md (and its SVG plots) from device results folders.

usage: render_benchmarks.py DIR [DIR...] [--plots PLOTDIR] [--plots-rel REL] [--note TEXT]...
                                                                               -> markdown on stdout
       render_benchmarks.py DIR --summary                                      -> short table
Each DIR may hold meta.json, bandwidth.json, handoff.json (ildl-handoff), bench.jsonl (bench/device-bench.sh: shared matrices),
large.jsonl (bench/device-large.sh: generated problems) and baseline.jsonl (ildl-baseline).
Every number comes from these files; nothing is typed by hand."""
import json, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svgplot  # noqa: E402

PAPER_BAB5 = {"setup": 0.10, "analysis": 0.00, "solve": 0.05, "iterations": 8, "gpu": "Titan V",
              "params": "RB, AMD, l_f 1, r_f 8, tau 1e-8, Rook, double"}
VECTORS_PER_ITERATION = 12  # n-vectors SQMR reads or writes per iteration (SpMV, dots, updates)
HANDOFF = None  # ildl-handoff's result: the latency of one cross-SM dependency step


def jsonl(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def load(dirs):
    meta, bw, small, large, base = {}, None, [], [], []
    global HANDOFF
    for d in dirs:
        p = os.path.join(d, "handoff.json")
        if os.path.exists(p) and os.path.getsize(p) and HANDOFF is None:
            HANDOFF = json.load(open(p))
    for d in dirs:
        p = os.path.join(d, "meta.json")
        if os.path.exists(p) and not meta:
            meta = json.load(open(p))
        p = os.path.join(d, "bandwidth.json")
        dir_bw = json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else None
        if bw is None:
            bw = dir_bw
        rows = jsonl(os.path.join(d, "bench.jsonl")), jsonl(os.path.join(d, "large.jsonl"))
        for r in rows[0] + rows[1]:
            if dir_bw:
                r["_bw"] = dir_bw  # a row's floor uses the bandwidth measured in its own run
        small += rows[0]
        large += rows[1]
        base += jsonl(os.path.join(d, "baseline.jsonl"))
    # a matrix that could not be read (e.g. its generator's input was not carried) has no results
    unread = sorted({name_of(r) for r in small + large if r.get("phase") == "read"})
    if unread:
        print("render_benchmarks: left out (not read on the device): " + ", ".join(unread), file=sys.stderr)
    small = [r for r in small if r.get("phase") != "read"]
    large = [r for r in large if r.get("phase") != "read"]
    return meta, bw, small, large, base


def name_of(r):
    return r.get("name") or os.path.basename(r["matrix"]).replace(".mtx.gz", "").replace(".mtx", "")


def total(r):
    return r["setup_s"] + r["factor_s"] + r["solve_s"]


def per_it(r):
    """Seconds per SQMR iteration: the iterations' own time (iterate_s) where the run recorded it,
    else (runs before iterate_s existed) the whole solve's time, fixed cost included."""
    if not r.get("iterations"):
        return None
    return (r.get("iterate_s") or r["solve_s"]) / r["iterations"]


def floor_s(r, bw):
    """Bandwidth floor of one SQMR iteration: bytes of A (CSR: 12 B per entry, 8 B per row), twice
    the factor (8 B value + 2 B index per stored entry: one sweep per triangular solve) and the
    vectors, over the measured device-to-device copy bandwidth."""
    bw = r.get("_bw") or bw
    if not bw:
        return None
    byt = 12 * r["nnz"] + 8 * (r["n"] + 1) + 2 * 10 * r["factor_nnz"] + VECTORS_PER_ITERATION * 8 * r["n"]
    return byt / (bw["d2d_GBps"] * 1e9)


def fmt(x, nd=4):
    return "—" if x is None else f"{x:.{nd}f}"


def fmt_s(x):
    if x is None:
        return "—"
    if x < 1e-3:
        return f"{x * 1e6:.1f} µs"
    return f"{x * 1e3:.2f} ms" if x < 1 else f"{x:.2f} s"


def group(rows, key=lambda r: name_of(r)):
    by = {}
    for r in rows:
        by.setdefault(key(r), {})[r["backend"]] = r
    return by


def ratio_cell(x):
    """A ratio to the floor: two decimals below 10 (2.17 must not read as 2), whole numbers above."""
    return f"{x:.2f}" if x < 10 else f"{x:.0f}"


def run_table(rows, bw, with_floor):
    hdr = ("| matrix | n | blocking | blocks | levels | backend | runs | setup s | factor s | solve s | total s | "
           "its | per it | ")
    if with_floor:
        hdr += "floor/it | per it / floor | "
    print(hdr + "true residual | converged |")
    print("|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if with_floor else "")
          + "---:|---|")
    for r in rows:
        pi, fl = per_it(r), floor_s(r, bw) if with_floor else None
        res = r["true_residual"]
        cells = [name_of(r), str(r["n"]), r.get("blocking", "?"), str(r["blocks"]), str(r["levels"]), r["backend"],
                 str(r.get("repeat", 1)), fmt(r["setup_s"]), fmt(r["factor_s"]), fmt(r["solve_s"]), fmt(total(r)),
                 str(r["iterations"]), fmt_s(pi)]
        if with_floor:
            cells += [fmt_s(fl) if r["backend"] == "cuda" else "—",
                      ratio_cell(pi / fl) if (r["backend"] == "cuda" and pi and fl) else "—"]
        cells += ["—" if res is None else f"{res:.2e}", "yes" if r["converged"] else "no"]
        print("| " + " | ".join(cells) + " |")


def ratios(by):
    out = []
    for m, v in sorted(by.items()):
        c, g = v.get("cpu"), v.get("cuda")
        if c and g and c.get("iterations") and g.get("iterations") and g["factor_s"] > 0:
            out.append({"m": m, "levels": g["levels"], "n": g["n"], "it": per_it(c) / per_it(g),
                        "its": g["iterations"],
                        "factor": c["factor_s"] / g["factor_s"], "tts": total(c) / total(g),
                        "conv": c["converged"] and g["converged"]})
    return out


def ratio_table(rs, title):
    if not rs:
        return
    print(f"\n{title}\n")
    print("| matrix | n | levels | per SQMR iteration | factorization | time to solution |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rs:
        tts = f"{r['tts']:.2f}" if r["conv"] else f"({r['tts']:.2f}: {r['its']} iterations, not converged)"
        print(f"| {r['m']} | {r['n']} | {r['levels']} | {r['it']:.2f} | {r['factor']:.2f} | {tts} |")
    print(f"\nMedians: per iteration {statistics.median(r['it'] for r in rs):.2f}, factorization "
          f"{statistics.median(r['factor'] for r in rs):.2f}, time to solution "
          f"{statistics.median([r['tts'] for r in rs if r['conv']] or [float('nan')]):.2f} (of those that "
          f"converged). The GPU is faster per iteration on "
          f"{sum(r['it'] > 1 for r in rs)} of {len(rs)}, in factorization on {sum(r['factor'] > 1 for r in rs)}, "
          f"in time to solution on {sum(r['tts'] > 1 for r in rs if r['conv'])} of the "
          f"{sum(1 for r in rs if r['conv'])} that converged.")


def baseline_section(by, base, label):
    names = set(by)
    base = [b for b in base if name_of(b) in names]
    if not base:
        return
    print(f"\n### Against the cuSPARSE baselines: {label}\n")
    print("`bench/baseline/ildl-baseline`: ILU(0) (cuSPARSE csrilu02, level-scheduled SpSV; `+boost`: "
          "zero pivots boosted) or Jacobi inside GMRES(30) and BiCGStab; convergence judged on the true "
          "residual, as ours. Time to solution = setup + solve (ours: setup + factor + solve, CUDA backend).\n")
    solvers = sorted({b["solver"] for b in base})
    print("| matrix | ours (GPU) | " + " | ".join(solvers) + " |")
    print("|---|---|" + "---|" * len(solvers))
    wins = {s: [0, 0] for s in solvers}
    conv_ours = ran = 0
    for m in sorted(by):
        g = by[m].get("cuda")
        if not g:
            continue
        ran += 1
        conv_ours += bool(g["converged"])
        tg = total(g)
        res = g["true_residual"]
        cell = (f"{tg:.4f} s, {g['iterations']} it" if g["converged"]
                else f"not conv. ({'—' if res is None else f'{res:.1e}'})")
        cells = []
        for s in solvers:
            r = next((b for b in base if b["solver"] == s and name_of(b) == m), None)
            if not r:
                cells.append("—")
            elif r.get("converged"):
                tb = (r.get("setup_s") or 0) + (r.get("solve_s") or 0)
                cells.append(f"{tb:.4f} s, {r['iterations']} it")
                wins[s][1] += 1
                wins[s][0] += bool(g["converged"] and tg < tb)
            else:
                cells.append(r.get("status", "?"))
        print(f"| {m} | {cell} | " + " | ".join(cells) + " |")
    print(f"\nConverged: ours {conv_ours} of {ran}; " + "; ".join(f"{s} {wins[s][1]}" for s in solvers) + ".")
    print("Where both converge, ours is faster than: " +
          "; ".join(f"{s} on {wins[s][0]} of {wins[s][1]}" for s in solvers) + ".")


def bab5_section(large):
    rows = [r for r in large if name_of(r).startswith("bab5")]
    if not rows:
        return
    p = PAPER_BAB5
    print("\n## The paper's bab5 row\n")
    print(f"bab5 from MIPLIB as an interior-point KKT matrix (`ildl-gen kkt-lp bab5.mps.gz --slacks`: geometric "
          f"scaling, standard form with slacks, D random in (0,1) over 6 decades), solved with the paper's "
          f"parameters ({p['params']}). The paper's matrix has 120 more rows (it keeps the 60 duplicate rows that "
          "our reader removes).\n")
    print("| run | n | preprocessing s (not timed in the paper) | factor s | analysis s | solve s | iterations | true residual |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| paper, {p['gpu']} | 30199 | — | {p['setup']:.2f} | {p['analysis']:.2f} | {p['solve']:.2f} | "
          f"{p['iterations']} | (not reported) |")
    for r in rows:
        print(f"| ours, {r['backend']} (median of {r.get('repeat', 1)}) | {r['n']} | {r['setup_s']:.4f} | "
              f"{r['factor_s']:.4f} | (in preprocessing) | {r['solve_s']:.4f} | {r['iterations']} | "
              f"{r['true_residual']:.2e} |")


def plots(plotdir, rel, small_by, large, base):
    os.makedirs(plotdir, exist_ok=True)
    out = []
    # 1. time to solution per matrix
    ms = [m for m in sorted(small_by) if "cpu" in small_by[m] and "cuda" in small_by[m]]
    if ms:
        best_base = []
        for m in ms:
            t = [(b.get("setup_s") or 0) + (b.get("solve_s") or 0) for b in base
                 if name_of(b) == m and b.get("converged")]
            best_base.append(min(t) if t else None)
        conv = lambda r: total(r) if r["converged"] else None
        svgplot.bars(os.path.join(plotdir, "tts-small.svg"), "Time to solution, shared matrices (converged runs only)",
                     ms, [("ours, GPU", [conv(small_by[m]["cuda"]) for m in ms]),
                          ("ours, CPU", [conv(small_by[m]["cpu"]) for m in ms]),
                          ("best cuSPARSE baseline", best_base)], "seconds (log)")
        out.append(("Time to solution per shared matrix (missing bar: that solver did not converge)", "tts-small.svg"))
    # 2. time per iteration vs n
    allrows = [r for v in small_by.values() for r in v.values()] + large
    series = []
    for be, lab in (("cuda", "GPU"), ("cpu", "CPU")):
        pts = [(r["n"], per_it(r)) for r in allrows if r["backend"] == be and per_it(r)]
        if pts:
            series.append((f"ours, {lab}", pts))
    if series:
        svgplot.scatter(os.path.join(plotdir, "per-iteration-vs-n.svg"), "Time per SQMR iteration vs n",
                        series, "n (log)", "seconds per iteration (log)")
        out.append(("Time per SQMR iteration against n (shared and generated matrices)", "per-iteration-vs-n.svg"))
    # 3. convergence histories (CPU runs carry the per-iteration estimates)
    hist = [(name_of(r), [(h[0], h[1]) for h in r["history"]]) for r in allrows
            if r["backend"] == "cpu" and r.get("history")]
    hist = sorted(hist, key=lambda h: -len(h[1]))[:10]
    if hist:
        svgplot.lines(os.path.join(plotdir, "convergence.svg"), "SQMR convergence (estimated relative residual)",
                      hist, "iteration", "estimate (log)")
        out.append(("Convergence histories (SQMR's residual estimate; the 10 longest runs)", "convergence.svg"))
    if out:
        print("\n## Plots\n")
        for cap, f in out:
            print(f"- {cap}:\n\n  ![{cap}]({rel}/{f})\n")


def targets(large, bw, meta=None):
    """The CUDA issue's targets, checked on the generated problems with n >= 1M."""
    big = group([r for r in large if r["n"] >= 1000000])
    rows = []
    for m, v in sorted(big.items()):
        c, g = v.get("cuda"), v.get("cpu")
        if c:
            rows.append((m, c, g))
    if not rows:
        return
    print(f"\n## Targets at n ≥ 1M ({(meta or {}).get('device') or 'GPU'})\n")
    hop = None
    if HANDOFF and "handoff_values_us" in HANDOFF:  # the solves' protocol 2 (values polled, no flags)
        hop = HANDOFF["handoff_values_us"]
        how = (f"the solves' protocol (poll the 32 values until written, write 32 values; "
               f"{HANDOFF['handoff_acqrel_us']:.2f} µs with acquire/release flags, ")
    elif HANDOFF:
        hop = HANDOFF.get("handoff_acqrel_us", HANDOFF["handoff_us"])
        how = "the solves' acquire/release flags (wait, read 32 values, publish; "
    if HANDOFF:
        print(f"Latency bound: one level of a block triangular solve cannot take less than one cross-SM "
              f"dependency step, measured in the same run by `ildl-handoff` at {hop:.2f} µs with {how}"
              f"{HANDOFF['handoff_us']:.2f} µs with "
              f"fences, {HANDOFF['handoff_trsv_us']:.2f} µs with fences and a 32-step substitution). So one "
              f"SQMR iteration takes at least 2 × levels × {hop:.2f} µs, whatever the bytes; the last column "
              f"is that bound over the bandwidth floor.\n")
    print("| matrix | n | levels | GPU factor s (target < 1 s) | time to solution CPU/GPU (target ≥ 10) | "
          "per iteration CPU/GPU | GPU per iteration / bandwidth floor (target ≤ 2) | latency bound / floor |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for m, c, g in rows:
        pi = per_it(c)
        fl = floor_s(c, bw)
        if g and c["converged"] and g["converged"]:
            tts = f"{total(g) / total(c):.1f}"
        elif g:
            tts = f"not converged in {c['iterations']} iterations (CPU and GPU agree)"
        else:
            tts = "—"
        pit = f"{per_it(g) / pi:.1f}" if g and pi and per_it(g) else "—"
        lb = (f"{2 * c['levels'] * hop * 1e-6 / fl:.1f}" if HANDOFF and fl else "—")
        # two decimals and a verdict: 2.04 printed as "2.0" would read as met
        ratio = (f"{pi / fl:.2f} ({'met' if pi / fl <= 2 else 'not met'})" if (pi and fl) else "—")
        if pi and fl and c.get("iterate_s") and c.get("iterations"):  # the older measure beside it
            ratio += f"; whole solve over its iterations {c['solve_s'] / c['iterations'] / fl:.2f}"
        print(f"| {m} | {c['n']} | {c['levels']} | {c['factor_s']:.2f} | {tts} | {pit} | {ratio} | {lb} |")



def r_first(rows, key):
    """The value of key in the first row that has it ('?' if none)."""
    return next((r[key] for r in rows if key in r), "?")


def not_run(meta, small_by):
    suite = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suite-small.txt")
    if meta.get("suite") != "small" or not os.path.exists(suite):
        return
    names = [l.strip().replace(".mtx.gz", "") for l in open(suite) if l.strip()]
    missing = [n for n in names if n not in small_by or "cuda" not in small_by[n] or "cpu" not in small_by[n]]
    if missing:
        print(f"- NOT RUN (the device call's time limit was reached first): {', '.join(missing)}")


def verdict(small_rs, large_rs, large_by, small_by):
    print("\n## Who wins where\n")
    for label, rs in (("shared matrices", small_rs), ("generated matrices", large_rs)):
        if not rs:
            continue
        conv = [r for r in rs if r["conv"]]
        win = [r["m"] for r in conv if r["tts"] > 1]
        lose = [r["m"] for r in conv if r["tts"] <= 1]
        print(f"- {label}: of the {len(conv)} that converged on both backends, the GPU backend wins time to "
              f"solution on {len(win)}"
              + (f" ({', '.join(win)})" if win and len(win) <= 12 else "")
              + (f"; the CPU backend wins on {', '.join(lose)}" if lose and len(lose) <= 12 else
                 (f"; the CPU backend wins on {len(lose)}" if lose else "")) + ".")
    for label, by in (("shared", small_by), ("generated", large_by)):
        fails = [m for m, v in by.items() if v.get("cuda") and not v["cuda"]["converged"]]
        if fails:
            print(f"- {label}, not converged within the iteration limit (CPU and GPU agree): {', '.join(sorted(fails))}.")


def main():
    args = [a for a in sys.argv[1:]]
    plotdir, rel = None, "bench-plots"
    if "--plots" in args:
        k = args.index("--plots")
        plotdir = args[k + 1]
        del args[k:k + 2]
    if "--plots-rel" in args:
        k = args.index("--plots-rel")
        rel = args[k + 1]
        del args[k:k + 2]
    notes = []
    while "--note" in args:  # where the rows come from, when the report joins several runs
        k = args.index("--note")
        notes.append(args[k + 1])
        del args[k:k + 2]
    summary = "--summary" in args
    dirs = [a for a in args if not a.startswith("--")]
    meta, bw, small, large, base = load(dirs)
    small_by = group(small)
    if summary:
        for r in small + large:
            print(f"{name_of(r)[:28]:28s} {r['backend']:4s} {r.get('blocking', ''):3s} lev {r['levels']:6d} "
                  f"setup {r['setup_s']:7.3f} factor {r['factor_s']:8.3f} solve {r['solve_s']:8.3f} "
                  f"it {r['iterations']:4d} res {r['true_residual'] or float('nan'):9.2e}")
        return
    print("# Benchmarks\n")
    print("Generated from the device's result files by `bench/render_benchmarks.py` (runs: "
          "`bench/device-bench.sh`, `bench/device-large.sh`); nothing here is typed by hand. "
          "Against NVIDIA cuDSS (first solve, refactor + solve, an interior-point loop): "
          "[benchmarks-cudss.md](benchmarks-cudss.md).\n")
    if meta:
        print(f"- device: {meta.get('device')} (driver {meta.get('driver')}), built with {meta.get('cuda_build')}")
        print(f"- host: {meta.get('host_cpus')} CPU cores (the CPU backend uses all of them through OpenMP)")
        print(f"- date: {meta.get('date')}" + (f"; built from commit {meta['commit']}" if meta.get("commit") else ""))
    for n in notes:
        print(f"- {n}")
    if bw:
        others = sorted({round(r["_bw"]["d2d_GBps"]) for r in small + large if r.get("_bw") and r["_bw"] is not bw})
        print(f"- device-to-device copy bandwidth, measured in the same run: {bw['d2d_GBps']:.0f} GB/s "
              f"(read + write of {bw['copy_bytes'] >> 20} MiB, median of 11)"
              + (f"; rows from other runs over their own run's ({', '.join(map(str, others))} GB/s)" if others else ""))
    print("- times: setup (analyse + upload), factor and solve, each the median of the runs column in one "
          "process; b = A·1, tolerance 1e-6 on the true relative residual of the original system")
    timed = [r for r in small + large if r.get("iterations")]
    with_it = sum(1 for r in timed if r.get("iterate_s"))
    print("- per iteration: the time of SQMR's iterations (`iterate_s`: the solve without its fixed cost, i.e. "
          "the copies of b and x, the initial residual and preconditioner application and the final true "
          f"residual) over their number, in {with_it} of {len(timed)} rows"
          + ("; in the others, from runs before `iterate_s` existed, the whole solve's time over the iterations"
             if with_it < len(timed) else ""))
    print("- bandwidth floor of one iteration: (12 B × nnz(A) + 8 B × (n+1) + 2 × 10 B × stored factor entries + "
          f"{VECTORS_PER_ITERATION} × 8 B × n) / copy bandwidth")
    srs = ratios(small_by)
    large_keys = group(large, key=lambda r: f"{name_of(r)} ({r.get('blocking', '?')})")
    lrs = ratios(large_keys)
    not_run(meta, small_by)
    verdict(srs, lrs, large_keys, small_by)
    targets(large, bw, meta)
    if small:
        print("\n## Shared matrices (library defaults)\n")
        used = sorted({r.get("ordering_used") for r in small if r.get("ordering_used")})
        print(f"Ordering {r_first(small, 'ordering')}"
              + ("; applied: " + ", ".join(f"{o} on {sum(1 for r in small if r.get('ordering_used') == o) // 2}"
                                           for o in used) + " matrices" if used else "") + ".\n")
        run_table(sorted(small, key=lambda r: (name_of(r), r["backend"])), bw, True)
        ratio_table(srs, "Ratios, CPU time / GPU time (above 1: the GPU wins):")
        baseline_section(small_by, base, "shared matrices")
    if large:
        print("\n## Generated matrices (bench/gen, docs/generators.md)\n")
        maxits = sorted({r.get("maxit") for r in large if r.get("maxit")})
        orders = sorted({r.get("ordering_used") or r.get("ordering", "?") for r in large})
        print(f"Library defaults (BR blocking, matching, ordering {r_first(large, 'ordering')} (applied: "
              f"{', '.join(orders)}), l_f 1, r_f 8, τ 1e-4, Rook), except bab5 (the paper's "
              f"parameters, below). SQMR iteration limit: {', '.join(str(m) for m in maxits)} "
              "(bench/device-report.sh); `runs` is the number of runs the times are the median of.\n")
        run_table(sorted(large, key=lambda r: (r["n"], name_of(r), r.get("blocking", ""), r["backend"])), bw, True)
        ratio_table(lrs, "Ratios, CPU time / GPU time (above 1: the GPU wins):")
        baseline_section(group(large), base, "generated matrices")
        bab5_section(large)
    if plotdir:
        plots(plotdir, rel, small_by, [r for r in large if not name_of(r).startswith("bab5")], base)


if __name__ == "__main__":
    main()
