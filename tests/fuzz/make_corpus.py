#!/usr/bin/env python3
"""Write the seed corpus of the fuzz harnesses (tests/fuzz/corpus/{api,mmio,matrix}/).

The api seeds are described here in readable form and encoded in the byte format that
fuzz_api.c decodes (its header comment and docs/reliability.md describe it); this script is
that format's reference encoder. The mmio seeds are Matrix Market texts, some gzip-compressed.

    python3 tests/fuzz/make_corpus.py            # (re)write every seed
    python3 tests/fuzz/make_corpus.py --check    # exit 1 if a committed seed differs

Names say what an input covers; known_* reproduce the defects of issue 35 (they fail until
those are fixed), the others are valid or invalid inputs that reach the library's paths.
"""
import gzip
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------ the api format

# ildl_options fields in fuzz_api.c's table order: (name, "i" int or "d" double)
FIELDS = [("backend", "i"), ("ordering", "i"), ("blocking", "i"), ("scaling", "i"),
          ("pivoting", "i"), ("precision", "i"), ("fill_level", "i"), ("fill_factor", "d"),
          ("drop_tol", "d"), ("max_block_size", "i"), ("block_threshold", "d"),
          ("block_decay", "d"), ("pivot_tol", "d"), ("pivot_perturb", "d"), ("leftover", "i"),
          ("tol", "d"), ("max_iter", "i"), ("use_initial_guess", "i"), ("check_every", "i"),
          ("num_threads", "i"), ("verbosity", "i"), ("device_id", "i"), ("solve_schedule", "i"),
          ("solve_kernels", "i"), ("l2_persist", "i")]
FIELD_INDEX = {name: k for k, (name, _) in enumerate(FIELDS)}

INT_MAX, INT_MIN = 2**31 - 1, -2**31
DBL_MAX = sys.float_info.max
# fuzz_api.c special(): index -> value
SPECIALS = [0.0, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 0.5,
            1e-300, -1e-300, 1e300, -1e300, 1e200, -1e200, 1e-200, DBL_MAX,
            -DBL_MAX, 1.7e308, sys.float_info.min, 5e-324, -5e-324, math.nan,
            math.inf, -math.inf, 1e-10, 1e10, 1e-16, 3.0, 1e150, 1e-150, 0.1, -0.0]

BASES = {"none": 0, "diagonal": 1, "tridiagonal": 2, "band2": 3, "arrow": 4, "saddle": 5,
         "dense": 6, "random": 7}
LAYOUTS = {"sorted": 0, "reversed": 1, "shuffled": 2}
CORRUPT = {"duplicate": 0, "column": 1, "rowptr": 2, "value": 3, "order": 4, "remove": 5,
           "empty_row": 6, "null": 7}
RHS = {"constant": 0, "index": 1, "values": 2, "rowsums": 3, "alternating": 4, "zero": 5}
X0 = {"zero": 0, "constant": 1, "values": 2}
FACTOR = {"null": 0, "copy": 1, "scaled": 2, "changed": 3}

ORDER = {"amd": 0, "rcm": 1, "gmc": 2, "metis": 3, "natural": 4, "auto": 5, "gmc_fill": 6}


def u8(v):
    return bytes([v & 0xFF])


def u16(v):
    return struct.pack("<H", v & 0xFFFF)


def value(v):
    """VALUE: tag 1 (a special), tag 0 (int8 a + b/256) or tag 3 (8 raw bytes)."""
    for k, s in enumerate(SPECIALS):
        if (math.isnan(v) and math.isnan(s)) or (s == v and math.copysign(1, s) == math.copysign(1, v)):
            return bytes([1, k])
    if not math.isnan(v) and not math.isinf(v) and -128 <= math.floor(v) <= 127:
        a = math.floor(v)
        b = (v - a) * 256
        if b == int(b) and 0 <= b < 256 and a + b / 256 == v:
            return bytes([0, a & 0xFF, int(b)])
    return bytes([3]) + struct.pack("<d", v)


def int_value(v):
    """(sel, payload): sel 1 small 0..7, 2 INT_MAX, 3 INT_MIN, 4 -1, 5 raw int32."""
    if 0 <= v <= 7:
        return bytes([1, v])
    if v == INT_MAX:
        return bytes([2])
    if v == INT_MIN:
        return bytes([3])
    if v == -1:
        return bytes([4])
    return bytes([5]) + struct.pack("<i", v)


def encode_api(d):
    n = d.get("n", 4)
    out = u8(n - 1)
    opts = d.get("options", [])
    assert len(opts) <= 4
    out += u8(len(opts))
    for name, v in opts:
        out += u8(FIELD_INDEX[name])
        out += int_value(v) if FIELDS[FIELD_INDEX[name]][1] == "i" else value(v)
    base = d.get("base", ("none",))
    out += u8(BASES[base[0]])
    if base[0] != "none":
        out += value(base[1]) + value(base[2])
        if base[0] == "random":
            out += u8(base[3]) + u8(base[4])  # seed, density (of 256)
    ents = d.get("entries", [])
    assert len(ents) <= 32
    out += u8(len(ents))
    for e in ents:  # (i, j, v, flags...) flags: "asym" (then vt), "add", "one_sided", "remove"
        i, j = e[0], e[1]
        fl = set(e[3:]) if len(e) > 3 else set()
        f = (1 if any(isinstance(x, tuple) and x[0] == "asym" for x in fl) else 0) | \
            (2 if "add" in fl else 0) | (4 if "one_sided" in fl else 0) | (8 if "remove" in fl else 0)
        out += u8(i) + u8(j) + u8(f)
        if not f & 8:
            out += value(e[2])
        if f & 1:
            out += value([x for x in fl if isinstance(x, tuple)][0][1])
    lay = d.get("layout", ("sorted",))
    out += u8(LAYOUTS[lay[0]])
    if lay[0] == "shuffled":
        out += u8(lay[1])
    cor = d.get("corrupt", [])
    assert len(cor) <= 4
    out += u8(len(cor))
    for c in cor:
        op = c[0]
        out += u8(CORRUPT[op])
        if op == "duplicate":  # (row, entry of the row, None = same value | new value)
            out += u8(c[1]) + u8(c[2]) + (u8(1) if c[3] is None else u8(0) + value(c[3]))
        elif op == "column":  # (global entry, which: 0 n, 1 -1, 2 INT32_MAX, 3 INT32_MIN, 4 n + k)
            out += u16(c[1]) + u8(c[2])
        elif op == "rowptr":  # (i, which: 0 -1, 1 +1, 2 = -1, 3 INT64_MAX, 4 nnz+1, 5 = 0)
            out += u8(c[1]) + u8(c[2])
        elif op == "value":  # (global entry, value)
            out += u16(c[1]) + value(c[2])
        elif op == "order":  # which n to pass: 0 0, 1 -1, 2 n-1, 3 INT32_MIN
            out += u8(c[1])
        elif op == "remove":  # (global entry)
            out += u16(c[1])
        elif op == "empty_row":
            out += u8(c[1])
        elif op == "null":  # 0 rowptr, 1 colind, 2 values
            out += u8(c[1])
    rhs = d.get("rhs", ("constant", 1.0))
    out += u8(RHS[rhs[0]])
    if rhs[0] in ("constant", "index", "alternating"):
        out += value(rhs[1])
    elif rhs[0] == "values":
        assert len(rhs[1]) == n
        for v in rhs[1]:
            out += value(v)
    ovr = d.get("rhs_overrides", [])
    assert len(ovr) <= 3
    out += u8(len(ovr))
    for i, v in ovr:
        out += u8(i) + value(v)
    x0 = d.get("x0", ("zero",))
    out += u8(X0[x0[0]])
    if x0[0] == "constant":
        out += value(x0[1])
    elif x0[0] == "values":
        for v in x0[1]:
            out += value(v)
    fac = d.get("factor", ("null",))
    out += u8(FACTOR[fac[0]])
    if fac[0] == "scaled":
        out += u8(fac[1] & 0xFF)  # power of two (int8, taken % 40)
    elif fac[0] == "changed":
        out += u16(fac[1]) + value(fac[2])
    out += u8((1 if d.get("solve_twice") else 0) | (2 if d.get("refactor") else 0))
    return out


T4 = ("tridiagonal", 4.0, -1.0)
API_SEEDS = {
    # ---- issue 35 reproducers (fail until fixed)
    "known_b_tiny_1e-300_tridiag4": dict(n=4, base=T4, rhs=("index", 1e-300)),
    "known_b_near_1e200_tridiag4": dict(n=4, base=T4, rhs=("values", [1e200, -2e200, 1.5e200, 9e199])),
    "known_fill_level_INT_MAX_gmc_fill": dict(n=12, base=("band2", 6.0, -1.0),
                                              options=[("ordering", ORDER["gmc_fill"]), ("fill_level", INT_MAX)]),
    "known_num_threads_100000": dict(n=8, base=T4, options=[("num_threads", 100000)]),
    # ---- found by the harness (docs/reliability.md, Campaigns)
    # b = -DBL_MAX: the solution (~ -0.5 DBL_MAX) is finite, but A x overflows in the final true
    # residual: NOT_CONVERGED with true_residual NaN (working tree of 2026-11-27, scaled-b solve)
    "found_b_-DBL_MAX_tridiag8_nan_residual": dict(n=8, base=T4, rhs=("constant", -DBL_MAX)),
    # tiny matrix (diagonal 7.7e-304), b ~ 1e300: no finite solution; NOT_CONVERGED with NaN
    "found_b_4e300_tiny_matrix_nan_residual": dict(n=4, base=("tridiagonal", 7.7485972322396463e-304,
                                                              1.978071295365994e-149),
                                                   rhs=("values", [0.0, 2e300, 0.0, 4e300])),
    # arrow matrix without a(0,0), off-diagonal -7.4e-251, b up to 1e200: x cannot be finite;
    # NOT_CONVERGED with true_residual Inf (working tree of 2026-11-27)
    "found_arrow5_no_diag_b1e200_inf_residual": dict(n=5, base=("arrow", -115.453125, -7.4294375379297335e-251),
                                                     entries=[(0, 0, 0.0, "remove")],
                                                     rhs=("values", [0.0, 1e200, -115.453125, -115.453125,
                                                                     -115.453125])),
    # tridiag(-1, -1, -1) of order 5 is singular; b up to 8e298: the iterates overflow and
    # NOT_CONVERGED comes with true_residual NaN (working tree of 2026-11-27)
    "found_singular_tridiag5_b8e298_nan_residual": dict(n=5, base=("tridiagonal", -1.0, -1.0),
                                                        rhs=("values", [0.0, -115.453125, 0.0019683837890625,
                                                                        -0.0, -8.3701391556246752e+298])),
    # a finite initial guess whose A x0 overflows: NAN_INF, documented only for a NaN/Inf in b or
    # in the initial guess (working tree of 2026-11-27)
    # A5 of ildl_apply_multi: the float factor (precision mixed) of an unscaled dense matrix with
    # entries of 1e200 overflows; ildl_apply then returns NaNs, and the vectorised loops of the
    # multi-vector solve gave some of them the other sign (CI's 60 s run, s36)
    "found_apply_multi_nan_sign_mixed_1e200": dict(n=12, options=[("precision", 2), ("scaling", 0), ("pivoting", 0)],
                                                   base=("dense", 20.0, -1e200)),
    "found_initial_guess_Ax0_overflow_nan_inf": dict(n=4, base=("diagonal", 1.7e308, 0.0),
                                                     options=[("use_initial_guess", 1)], x0=("constant", 1e10),
                                                     rhs=("constant", 1.0)),
    # a subnormal b with an initial guess of 1e185: scaled to b's size (2^1037) the initial guess
    # overflows; the solve returned NAN_INF (the device campaign of 2026-11-27, 14 crashes)
    "found_b_subnormal_x0_1e185_scaled_x0_overflows": dict(n=2, base=("diagonal", 1.0, 0.0),
                                                           options=[("use_initial_guess", 1)],
                                                           x0=("values", [1.00390625, 1.8178616996994302e+185]),
                                                           rhs=("constant", 6.5781869422098444e-313)),
    # ---- valid systems, a variety of options
    "valid_diag_n1": dict(n=1, base=("diagonal", 2.0, 0.0)),
    "valid_tridiag16_defaults": dict(n=16, base=T4, rhs=("constant", 1.0), solve_twice=True),
    "valid_tridiag64_rcm_rb": dict(n=64, base=T4, options=[("ordering", ORDER["rcm"]), ("blocking", 0),
                                                           ("max_block_size", 4)], rhs=("index", 1.0)),
    "valid_saddle20_bk_equilibrate": dict(n=20, base=("saddle", 3.0, 1.0),
                                          options=[("pivoting", 1), ("scaling", 1)], rhs=("alternating", 1.0)),
    "valid_saddle33_rook_matching_single": dict(n=33, base=("saddle", 1.0, 2.0),
                                                options=[("precision", 1), ("ordering", ORDER["metis"])],
                                                rhs=("rowsums",), refactor=True),
    "valid_dense12_mixed_nopivot": dict(n=12, base=("dense", 20.0, 0.5),
                                        options=[("precision", 2), ("pivoting", 0), ("scaling", 0)]),
    "valid_random48_gmc_fill2": dict(n=48, base=("random", 8.0, -1.0, 7, 40),
                                     options=[("ordering", ORDER["gmc_fill"]), ("fill_level", 2)],
                                     rhs=("index", 1.0)),
    "valid_random40_gmc_verbose": dict(n=40, base=("random", -3.0, 1.0, 99, 60),
                                       options=[("ordering", ORDER["gmc"]), ("verbosity", 2),
                                                ("leftover", 1)]),
    "valid_arrow30_natural_drop": dict(n=30, base=("arrow", 10.0, 1.0),
                                       options=[("ordering", ORDER["natural"]), ("drop_tol", 0.5),
                                                ("fill_factor", 1.0)]),
    "valid_band2_32_initial_guess": dict(n=32, base=("band2", 5.0, 1.0),
                                         options=[("use_initial_guess", 1), ("check_every", 3)],
                                         x0=("constant", 0.5)),
    "valid_tridiag10_max_iter0": dict(n=10, base=T4, options=[("max_iter", 0)]),
    "valid_tridiag10_tol_tiny": dict(n=10, base=T4, options=[("tol", 1e-15)], solve_twice=True),
    "valid_tridiag8_unsorted_shuffled": dict(n=8, base=T4, layout=("shuffled", 5)),
    "valid_tridiag8_unsorted_reversed": dict(n=8, base=T4, layout=("reversed",), rhs=("index", -2.0)),
    "valid_tridiag8_b_zero": dict(n=8, base=T4, rhs=("zero",)),
    "valid_indefinite_diag_2x2": dict(n=6, base=("diagonal", 0.0, 0.0),
                                      entries=[(0, 1, 1.0), (2, 3, 1.0), (4, 5, -1.0)]),
    "valid_magnitudes_1e300_1e-300": dict(n=6, base=("tridiagonal", 1e300, 1e-300), rhs=("constant", 1.0)),
    "valid_magnitudes_1.7e308_diag": dict(n=5, base=("diagonal", 1.7e308, 0.0), rhs=("constant", 1e300)),
    "valid_subnormal_offdiag": dict(n=6, base=("tridiagonal", 1.0, 5e-324)),
    "valid_asym_within_1e-12": dict(n=4, base=T4, entries=[(0, 1, -1.0, ("asym", -1.0 - 1e-13))]),
    "valid_factor_scaled_2^10": dict(n=8, base=T4, factor=("scaled", 10), refactor=True),
    "valid_factor_copy": dict(n=8, base=("band2", 6.0, -1.0), factor=("copy",), solve_twice=True),
    "valid_b_overrides_mixed_scale": dict(n=8, base=T4, rhs=("constant", 1.0),
                                          rhs_overrides=[(0, 1e-300), (3, 1e10), (7, -1e-10)]),
    "valid_fill_level0_block1": dict(n=24, base=("random", 5.0, 1.0, 3, 90),
                                     options=[("fill_level", 0), ("max_block_size", 1)]),
    # ---- invalid matrices, options and vectors (refused with a status)
    "invalid_duplicate_entry": dict(n=5, base=T4, corrupt=[("duplicate", 2, 1, None)]),
    "invalid_duplicate_other_value": dict(n=5, base=T4, corrupt=[("duplicate", 0, 0, 3.0)]),
    "invalid_column_out_of_range": dict(n=5, base=T4, corrupt=[("column", 3, 0)]),
    "invalid_column_negative": dict(n=5, base=T4, corrupt=[("column", 4, 1)]),
    "invalid_column_INT32_MAX": dict(n=5, base=T4, corrupt=[("column", 6, 2)]),
    "invalid_rowptr_decreasing": dict(n=5, base=T4, corrupt=[("rowptr", 2, 3)]),
    "invalid_rowptr0_nonzero": dict(n=5, base=T4, corrupt=[("rowptr", 0, 1)]),
    "invalid_value_nan": dict(n=5, base=T4, corrupt=[("value", 4, math.nan)]),
    "invalid_value_inf": dict(n=5, base=T4, corrupt=[("value", 0, math.inf)]),
    "invalid_asymmetric_value": dict(n=4, base=T4, entries=[(1, 2, -1.0, ("asym", -1.5))]),
    "invalid_asymmetric_pattern": dict(n=4, base=T4, entries=[(0, 3, 1.0, "one_sided")]),
    "invalid_empty_row": dict(n=6, base=T4, corrupt=[("empty_row", 2)]),
    "invalid_removed_entry": dict(n=6, base=T4, corrupt=[("remove", 5)]),
    "invalid_n_zero": dict(n=4, base=T4, corrupt=[("order", 0)]),
    "invalid_n_negative": dict(n=4, base=T4, corrupt=[("order", 3)]),
    "invalid_null_colind": dict(n=4, base=T4, corrupt=[("null", 1)]),
    "invalid_no_entries": dict(n=3, base=("none",)),
    "invalid_b_nan": dict(n=4, base=T4, rhs=("constant", 1.0), rhs_overrides=[(2, math.nan)]),
    "invalid_b_inf": dict(n=4, base=T4, rhs=("constant", 1.0), rhs_overrides=[(0, -math.inf)]),
    "invalid_x0_nan": dict(n=4, base=T4, options=[("use_initial_guess", 1)], x0=("constant", math.nan)),
    "invalid_factor_nan": dict(n=4, base=T4, factor=("changed", 3, math.nan)),
    "invalid_factor_asymmetric": dict(n=4, base=T4, factor=("changed", 1, 7.0)),
    "invalid_option_tol_zero": dict(n=4, base=T4, options=[("tol", 0.0)]),
    "invalid_option_tol_nan": dict(n=4, base=T4, options=[("tol", math.nan)]),
    "invalid_option_ordering_7": dict(n=4, base=T4, options=[("ordering", 7)]),
    "invalid_option_block_size_33": dict(n=4, base=T4, options=[("max_block_size", 33)]),
    "invalid_option_fill_level_-1": dict(n=4, base=T4, options=[("fill_level", -1)]),
    "invalid_option_backend_INT_MIN": dict(n=4, base=T4, options=[("backend", INT_MIN)]),
    "invalid_option_num_threads_-1": dict(n=4, base=T4, options=[("num_threads", -1)]),
    "invalid_option_pivot_perturb_0_single": dict(n=4, base=T4, options=[("pivot_perturb", 0.0),
                                                                         ("precision", 1)]),
    "invalid_option_fill_factor_0.5": dict(n=4, base=T4, options=[("fill_factor", 0.5)]),
    "invalid_option_check_every_0": dict(n=4, base=T4, options=[("check_every", 0)]),
}

# ------------------------------------------------------------------ the mmio seeds

MM_SYM = "%%MatrixMarket matrix coordinate real symmetric\n"
MM_GEN = "%%MatrixMarket matrix coordinate real general\n"
TRI4 = MM_SYM + "% tridiag(-1, 4, -1)\n4 4 7\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n4 3 -1\n4 4 4\n"
MMIO_SEEDS = {
    # issue 35 item 5: a size line that no entry backs (must be refused before n-sized arrays)
    "known_n300000000_nnz0.mtx": MM_SYM + "300000000 300000000 0",
    "known_n300000000_nnz0.mtx.gz": (MM_SYM + "300000000 300000000 0\n", "gz"),
    # issue 35 item 6: a finite pair near DBL_MAX in a general file
    "known_general_pair_1.7e308.mtx": MM_GEN + "2 2 4\n1 1 1\n1 2 1.7e308\n2 1 1.7e308\n2 2 1\n",
    # duplicates that sum beyond DBL_MAX (must be refused, not returned as Inf)
    "dup_sum_overflow.mtx": MM_SYM + "2 2 3\n1 1 1e308\n1 1 1e308\n2 2 1\n",
    # a coordinate vector of 2e9 entries declared by a 60-byte file
    "vector_coordinate_length_2e9.mtx": MM_GEN + "2000000000 1 0\n",
    "valid_tridiag4.mtx": TRI4,
    "valid_tridiag4.mtx.gz": (TRI4, "gz"),
    "valid_general3.mtx": MM_GEN + "3 3 5\n1 1 2\n1 3 -1.5\n2 2 3e-5\n3 1 -1.5\n3 3 1e10\n",
    "valid_pattern_symmetric.mtx": "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 4\n1 1\n2 1\n2 2\n3 3\n",
    "valid_integer_upper_triangle.mtx": "%%MatrixMarket matrix coordinate integer symmetric\n3 3 5\n"
                                        "1 1 4\n1 2 -1\n2 2 4\n2 3 -1\n3 3 4\n",
    "valid_comments_blank_crlf.mtx": "%%matrixmarket MATRIX Coordinate REAL Symmetric\r\n%c\r\n\r\n"
                                     "  2 2 2  \r\n% mid\r\n1 1 1.0e+00\r\n\t2 2 -1\r\n",
    "valid_duplicates_summed.mtx": MM_SYM + "2 2 4\n1 1 1\n1 1 2\n2 1 0.5\n2 2 -1\n",
    "valid_vector_array.mtx": "%%MatrixMarket matrix array real general\n3 1\n1\n-2.5\n1e-300\n",
    "valid_vector_freeform.txt": "1.0 2.0\n3e200\n-4\n",
    "valid_vector_coordinate.mtx": MM_GEN + "4 1 2\n1 1 3\n4 1 -1\n",
    "invalid_not_square.mtx": MM_SYM + "2 3 1\n1 1 1\n",
    "invalid_index_range.mtx": MM_SYM + "2 2 1\n3 1 1\n",
    "invalid_value_inf.mtx": MM_SYM + "1 1 1\n1 1 1e999\n",
    "invalid_general_asymmetric.mtx": MM_GEN + "2 2 4\n1 1 1\n1 2 2\n2 1 3\n2 2 1\n",
    "invalid_complex.mtx": "%%MatrixMarket matrix coordinate complex hermitian\n1 1 1\n1 1 1 0\n",
    "invalid_truncated_gzip.mtx.gz": (TRI4, "gz-truncated"),
    "invalid_nul_byte.mtx": MM_SYM + "1 1 1\n1 1\x002\n",
}


def mmio_bytes(spec):
    if isinstance(spec, tuple):
        text, kind = spec
        z = gzip.compress(text.encode("latin-1"), compresslevel=9, mtime=0)
        return z if kind == "gz" else z[: len(z) // 2]
    return spec.encode("latin-1")


# fuzz_matrix (the descriptor): layout byte (bit 0 COO, 1 base 1, 2-3 view, 4 duplicates summed,
# 5 64-bit row pointers, 6 64-bit indices, 7 one field broken), n - 1, count, count x (row + 1,
# col + 1, value byte: 32 = 4.0, 248 = -1.0, 14 = NaN), the CSR pointer to decrease (0: none),
# the sub-pattern's mask. Indices are 0-based here; the harness adds the base.
def matrix_seed(lay, n, entries, rowdec=0, drop=0x55, broken=None, phases=None):
    head = [lay] + ([broken] if broken is not None else []) + [n - 1, len(entries)]
    body = [b for (i, j, v) in entries for b in (i + 1, j + 1, v)]
    return bytes(head + body + [rowdec, drop] + ([phases] if phases is not None else []))


_TRI_LOWER = [(i, i, 32) for i in range(5)] + [(i, i - 1, 248) for i in range(1, 5)]
MATRIX_SEEDS = {
    "coo_lower_base1_sum": matrix_seed(1 | 2 | 1 << 2 | 1 << 4 | 1 << 6, 5, _TRI_LOWER + [(0, 0, 32)]),
    "csr_upper_base0_32": matrix_seed(2 << 2, 5, [(i, i, 32) for i in range(5)] + [(i - 1, i, 248) for i in range(1, 5)]),
    "coo_full_dup_refused": matrix_seed(1, 5, [(i, i, 32) for i in range(5)] + [(0, 0, 16)]),
    "coo_lower_nan": matrix_seed(1 | 1 << 2, 5, [(i, i, 32) for i in range(5)] + [(2, 1, 14)]),
    "csr_lower_rowptr_moved": matrix_seed(1 << 2 | 1 << 5, 5, [(i, i, 32) for i in range(5)], rowdec=3),
    "broken_duplicates_rule": matrix_seed(1 | 1 << 7, 5, [(0, 0, 32)], broken=2),
    "coo_lower_analyse_then_factor": matrix_seed(1 | 1 << 2, 5, _TRI_LOWER, phases=1),
}


def main():
    check = "--check" in sys.argv[1:]
    bad = 0
    for sub, seeds, enc in (("api", API_SEEDS, encode_api), ("mmio", MMIO_SEEDS, mmio_bytes),
                            ("matrix", MATRIX_SEEDS, lambda b: b)):
        d = os.path.join(HERE, "corpus", sub)
        os.makedirs(d, exist_ok=True)
        for name, desc in sorted(seeds.items()):
            data = enc(desc)
            path = os.path.join(d, name)
            if check:
                try:
                    with open(path, "rb") as f:
                        same = f.read() == data
                except OSError:
                    same = False
                if not same:
                    print("differs: " + os.path.relpath(path, HERE))
                    bad = 1
            else:
                with open(path, "wb") as f:
                    f.write(data)
    if not check:
        print("wrote %d api, %d mmio and %d matrix seeds" % (len(API_SEEDS), len(MMIO_SEEDS), len(MATRIX_SEEDS)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
