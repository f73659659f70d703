"""What the CPU studies (preprocessing_study.py, ordering_study.py) share: the command line, one
`ildl solve --json` run, and a resumable run over every shared matrix and configuration."""
import argparse, concurrent.futures as cf, glob, json, os, subprocess


def parse_args(out, results, timeout):
    """The studies' common options, with this study's defaults for --out, --results, --timeout."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--ildl", default="build/tools/ildl")
    ap.add_argument("--matrices", default="../shared/matrices")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=timeout)
    ap.add_argument("--out", default=out)
    ap.add_argument("--results", default=results)
    return ap.parse_args()


def solve_json(ildl, path, options, timeout):
    """`ildl solve PATH --backend cpu --threads 1 OPTIONS --json` on one thread: its JSON
    object, or a not-converged record marked timeout when it ran out of time or printed none."""
    cmd = [ildl, "solve", path, "--backend", "cpu", "--threads", "1"] + options + ["--json", "--quiet"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env).stdout
        return json.loads(out.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return {"matrix": path, "converged": False, "timeout": True}


def run_all(a, configs, run_one, key):
    """Run run_one(path, config) for every shared matrix and config not yet in a.results (jsonl,
    appended as runs finish, so an interrupted study resumes); key(record) -> (name, config).
    Returns ({(name, config): record}, sorted matrix names)."""
    done = {}
    if os.path.exists(a.results):
        for line in open(a.results):
            r = json.loads(line)
            done[key(r)] = r
    mats = sorted(glob.glob(os.path.join(a.matrices, "*.mtx.gz")))
    todo = [(m, c) for m in mats for c in configs if (os.path.basename(m), c) not in done]
    with cf.ThreadPoolExecutor(a.jobs) as ex, open(a.results, "a") as f:
        for r in ex.map(lambda t: run_one(t[0], t[1]), todo):
            done[key(r)] = r
            f.write(json.dumps(r) + "\n")
            f.flush()
    return done, sorted({os.path.basename(m) for m in mats})
