#!/usr/bin/env python3
"""Where a sync-free sweep's time goes, from a trace of a build with -DILDL_SOLVE_TRACE.

Build with -DCMAKE_CUDA_FLAGS=-DILDL_SOLVE_TRACE (the records go to ildl-solve-trace.bin in the
working directory; adding -DILDL_SOLVE_TRACE_FILE='"FILE"' names another: src/cuda/common.cuh) and run
ILDL_CUDA_PROFILE=1 ildl solve ... --time-apply 1;
then: solve_trace.py FILE [BLOCKSxWARPS_FORWARD BLOCKSxWARPS_BACKWARD]. Per direction it prints the sweep's span and, along the critical
path (from the last row published, back through the dependency each row waited for last):
  claim lag  the row was claimed (ticket) after that dependency had already published
             (the sweep lacked blocks: throughput-bound),
  handoff    from the dependency's publish to the waiting warp seeing it,
  finish     from then to the row's own publish (last tile, combine, V_ii, publish).
The kernels without staging tiles (one warp a row, the default at n >= 1M) record as the
row's last wait the last tile whose dependency was still unset at its first poll (the one
the row actually waited for), and in place of the staged kernels' stage / wait / compute
times: the tiles that waited, the ns in all dependency reads, the ns in the waits; their
finish is split the same way (walk end, V_ii applied, published).
"""
import statistics
import struct
import sys

MASK40 = (1 << 40) - 1


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    nb, nlev = struct.unpack_from("<ii", data, 0)
    off = 8
    level_ptr = struct.unpack_from("<%di" % (nlev + 1), data, off)
    off += 4 * (nlev + 1)
    rows = struct.unpack_from("<%di" % nb, data, off)
    off += 4 * nb
    rec = struct.unpack_from("<%dQ" % (20 * nb), data, off)
    return nb, nlev, level_ptr, rows, rec


def full_time(lt, ref):
    t = (ref & ~MASK40) | lt
    if t < ref - (1 << 39):
        t += 1 << 40
    elif t > ref + (1 << 39):
        t -= 1 << 40
    return t


def sweep(nb, level_ptr, rows, rec, d):
    claim, wait, dep, pub, row_of = {}, {}, {}, {}, {}
    base = d * nb * 10
    sums = [0, 0, 0, 0]
    marks = {}
    for t in range(nb):
        c, last, p, i, st, wt, ct, nt, m0, m1 = rec[base + 10 * t: base + 10 * t + 10]
        marks[i] = (m0, m1)
        for k, v in enumerate((st, wt, ct, nt)):
            sums[k] += v
        claim[i], pub[i] = c, p
        if last:
            wait[i] = full_time(last >> 24, c)
            dep[i] = last & ((1 << 24) - 1)
    t0 = min(claim.values())
    span = max(pub.values()) - t0
    # the critical path, back from the last row published
    i = max(pub, key=pub.get)
    steps, lag, handoff, finish = 0, 0, 0, 0
    fin = [0, 0, 0]  # last wait -> groups summed -> V_ii applied -> published
    while i in dep:
        m0, m1 = marks[i]
        if m0 and m1:
            fin[0] += m0 - wait[i]
            fin[1] += m1 - m0
            fin[2] += pub[i] - m1
        k = dep[i]
        steps += 1
        if claim[i] > pub[k]:
            lag += claim[i] - pub[k]
            handoff += max(0, wait[i] - claim[i])
        else:
            handoff += wait[i] - pub[k]
        finish += pub[i] - wait[i]
        i = k
    head = pub[i] - t0  # the chain's first row: claim to publish, no wait
    all_handoff = [wait[i] - pub[dep[i]] for i in dep if claim[i] <= pub[dep[i]]]
    all_finish = [pub[i] - wait[i] for i in dep]
    late = sum(1 for i in dep if claim[i] > pub[dep[i]])
    return {
        "span_us": span / 1e3, "steps": steps, "levels": len(level_ptr) - 1,
        "path_lag_us": lag / 1e3, "path_handoff_us": handoff / 1e3, "path_finish_us": finish / 1e3,
        "path_head_us": head / 1e3,
        "median_handoff_us": statistics.median(all_handoff) / 1e3 if all_handoff else 0,
        "median_finish_us": statistics.median(all_finish) / 1e3 if all_finish else 0,
        "rows_claimed_late": late, "rows_waiting": len(dep),
        "median_row_us": statistics.median(pub[i] - claim[i] for i in pub) / 1e3,
        "tiles": sums[3], "stage_us": sums[0] / 1e3, "wait_us": sums[1] / 1e3, "compute_us": sums[2] / 1e3,
        "row_us": sum(pub[i] - claim[i] for i in pub) / 1e3,
        "fin_us": [v / 1e3 for v in fin],
    }


def main():
    nb, nlev, level_ptr, rows, rec = load(sys.argv[1])
    for d, name in ((0, "forward"), (1, "backward")):
        s = sweep(nb, level_ptr, rows, rec, d)
        print("%-8s span %.1f us, %d levels, critical path %d steps: claim lag %.1f, handoff %.1f, "
              "finish %.1f, head %.1f us; per row: handoff %.2f, finish %.2f, claim-to-publish %.2f us "
              "(medians); %d of %d waiting rows claimed after their last dependency published"
              % (name, s["span_us"], s["levels"], s["steps"], s["path_lag_us"], s["path_handoff_us"],
                 s["path_finish_us"], s["path_head_us"], s["median_handoff_us"], s["median_finish_us"],
                 s["median_row_us"], s["rows_claimed_late"], s["rows_waiting"]))
        print("         finish on the critical path: to the groups' sum %.1f, V_ii %.1f, store+publish %.1f us"
              % tuple(s["fin_us"]))
        warps = [int(a) for a in sys.argv[2 + d].split("x")] if len(sys.argv) > 3 else None
        line = ("         tiles %d: per tile stage %.2f, wait %.2f, compute %.2f us (warp time, means); rows "
                "claim-to-publish %.0f block-us" % (s["tiles"], s["stage_us"] / max(1, s["tiles"]),
                s["wait_us"] / max(1, s["tiles"]), s["compute_us"] / max(1, s["tiles"]), s["row_us"]))
        if warps:
            blocks, w = warps
            line += ("; of %.0f warp-us available: stage %.0f%%, wait %.0f%%, compute %.0f%%; of %.0f block-us "
                     "rows held %.0f%%" % (blocks * w * s["span_us"], 100 * s["stage_us"] / (blocks * w * s["span_us"]),
                     100 * s["wait_us"] / (blocks * w * s["span_us"]), 100 * s["compute_us"] / (blocks * w * s["span_us"]),
                     blocks * s["span_us"], 100 * s["row_us"] / (blocks * s["span_us"])))
        print(line)


if __name__ == "__main__":
    main()
