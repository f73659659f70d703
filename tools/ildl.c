/* ildl -- command-line front end of libblockildl (the main job).
 *   ildl solve FILE.mtx[.gz] [options]   solve A x = b (b = A*ones unless --rhs) and report
 *   ildl --help | --version
 * Exit status: 0 converged, 1 not converged, 2 bad input or failure. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blockildl.h"
#include "core/csr.h"
#include "core/util.h"
#include "io/mmio.h"
#include "tools/stats.h"

typedef struct { const char *name; int value; } named;
static const named backends[] = {{"auto", ILDL_BACKEND_AUTO}, {"cpu", ILDL_BACKEND_CPU}, {"cuda", ILDL_BACKEND_CUDA}, {0, 0}};
static const named orderings[] = {{"amd", ILDL_ORDER_AMD}, {"rcm", ILDL_ORDER_RCM}, {"gmc", ILDL_ORDER_GMC},
                                  {"metis", ILDL_ORDER_METIS}, {"natural", ILDL_ORDER_NATURAL},
                                  {"auto", ILDL_ORDER_AUTO}, {"gmc-fill", ILDL_ORDER_GMC_FILL}, {0, 0}};
static const named blockings[] = {{"rb", ILDL_BLOCKING_RB}, {"br", ILDL_BLOCKING_BR}, {"sn", ILDL_BLOCKING_SN}, {0, 0}};
static const named pivots[] = {{"none", ILDL_PIVOT_NONE}, {"bk", ILDL_PIVOT_BK}, {"rook", ILDL_PIVOT_ROOK}, {0, 0}};
static const named precisions[] = {{"double", ILDL_PREC_DOUBLE}, {"single", ILDL_PREC_SINGLE}, {"mixed", ILDL_PREC_MIXED}, {0, 0}};
static const named scalings[] = {{"none", ILDL_SCALING_NONE}, {"equilibrate", ILDL_SCALING_EQUILIBRATE},
                                 {"matching", ILDL_SCALING_MATCHING}, {0, 0}};
static const named schedules[] = {{"levels", ILDL_SCHEDULE_LEVELS}, {"syncfree", ILDL_SCHEDULE_SYNCFREE}, {0, 0}};
static const named solve_kernels[] = {{"auto", ILDL_SOLVE_KERNELS_AUTO}, {"staged", ILDL_SOLVE_KERNELS_STAGED}, {0, 0}};
static const named l2_persists[] = {{"auto", ILDL_L2_PERSIST_AUTO}, {"off", ILDL_L2_PERSIST_OFF}, {0, 0}};
static const named escalations[] = {{"none", ILDL_ESCALATE_NONE}, {"fill", ILDL_ESCALATE_FILL},
                                    {"complete", ILDL_ESCALATE_COMPLETE}, {0, 0}};
static const named rung_choices[] = {{"cost", ILDL_RUNG_CHOICE_COST}, {"failure", ILDL_RUNG_CHOICE_FAILURE}, {0, 0}};
static const named methods[] = {{"ildl", ILDL_METHOD_ILDL}, {"block-jacobi", ILDL_METHOD_BLOCK_JACOBI},
                                {"fixed-point", ILDL_METHOD_FIXED_POINT}, {0, 0}};
static const named leftovers[] = {{"scan", ILDL_LEFTOVER_SCAN}, {"atomic", ILDL_LEFTOVER_ATOMIC}, {0, 0}};

static const char *name_of(const named *t, int v)
{
    for (; t->name; t++) if (t->value == v) return t->name;
    return "?";
}

static int parse_named(const named *t, const char *opt, const char *arg, int *out)
{
    for (const named *p = t; p->name; p++)
        if (strcmp(p->name, arg) == 0) { *out = p->value; return 0; }
    fprintf(stderr, "ildl: %s: unknown value '%s' (one of:", opt, arg);
    for (; t->name; t++) fprintf(stderr, " %s", t->name);
    fprintf(stderr, ")\n");
    return -1;
}

static int parse_double(const char *opt, const char *arg, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !isfinite(v)) { fprintf(stderr, "ildl: %s: '%s' is not a number\n", opt, arg); return -1; }
    *out = v;
    return 0;
}

static int parse_int(const char *opt, const char *arg, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || v < -1000000000L || v > 1000000000L) { fprintf(stderr, "ildl: %s: '%s' is not an integer\n", opt, arg); return -1; }
    *out = (int)v;
    return 0;
}

static void usage(FILE *f)
{
    ildl_options d;
    ildl_options_default(&d);
    fprintf(f,
        "usage: ildl solve FILE.mtx[.gz] [options]\n"
        "       ildl stats FILE.mtx[.gz] [--max-level L] [--block-size B] [--block-threshold C] [--svg PREFIX]\n"
        "       ildl --help | --version\n\n"
        "Solve A x = b for a sparse symmetric (indefinite) matrix A in Matrix Market format with\n"
        "SQMR preconditioned by a block-incomplete LDL^T. b = A*ones unless --rhs is given.\n\n"
        "options (default in brackets):\n"
        "  --backend cpu|cuda|auto       compute backend [%s]\n"
        "  --ordering auto|amd|rcm|gmc|gmc-fill|metis|natural  ordering of the blocks (auto: AMD, METIS if AMD's block graph is a chain; gmc-fill if the block graph has >= 1000 blocks and 4x fewer levels so; gmc-fill: colour classes stay level sets after the fill) [%s]\n"
        "  --blocking rb|br|sn           blocking strategy (sn: chains of the elimination tree, for\n"
        "                                complete factors; short chains merged up to the block size) [%s]\n"
        "  --scaling none|equilibrate|matching    scaling [%s]\n"
        "  --fill-level L                block level of fill l_f [%d]\n"
        "  --fill-factor R               capacity per block r_f * nnz(A_ij); <= 0 unlimited [%g]\n"
        "  --threshold T                 drop tolerance tau [%g]\n"
        "  --pivot none|bk|rook          pivoting in diagonal blocks [%s]\n"
        "  --method ildl|block-jacobi|fixed-point   the preconditioner: the block-iLDL^T, block-Jacobi\n"
        "                                on the same blocks (inverted by Gauss-Jordan), or the\n"
        "                                fixed-point (Jacobi-sweep) block factorization (docs/methods.md) [%s]\n"
        "  --fp-sweeps N                 fixed-point: sweeps, 1..%d [%d]\n"
        "  --fp-eps E                    fixed-point: pivots below E delta^(s-1) ||A||_inf perturbed [%g]\n"
        "  --fp-delta D                  fixed-point: the perturbation's factor per sweep, (0,1] [%g]\n"
        "  --precision double|single|mixed   factor/solve precision [%s]\n"
        "  --block-size B                max rows per block, 1..32 [%d]\n"
        "  --block-threshold C           cosine similarity threshold [%g]\n"
        "  --leftover scan|atomic        leftover capacity protocol [%s]\n"
        "  --schedule levels|syncfree    GPU triangular-solve schedule [%s]\n"
        "  --factor-schedule levels|syncfree   GPU factorization schedule (sync-free where every\n"
        "                                tile is dense and the drop tolerance 0) [%s]\n"
        "  --solve-kernels auto|staged   GPU sync-free solve kernels (staged: less device memory,\n"
        "                                slower on wide levels) [%s]\n"
        "  --l2-persist auto|off         GPU: keep the sweeps' vectors in L2 (raises the device's\n"
        "                                persisting-L2 size; off leaves it alone) [%s]\n"
        "  --escalation none|fill|complete   the highest rung of the ladder when SQMR fails: rung 1\n"
        "                                more fill, rung 2 the complete factor [%s]\n"
        "  --rung-choice cost|failure    climb where SQMR fails, and (cost) also before the next\n"
        "                                factor or solve where a converged solve's rung models a\n"
        "                                step at least twice the complete rung's [%s]\n"
        "  --escalation-max-bytes B      a rung whose factor needs more bytes is not taken; 0 =\n"
        "                                half the host's memory [%g]\n"
        "  --escalation-max-seconds S    no rung starts after the solve has run S s; 0 = no limit [%g]\n"
        "  --pushback N                  outer pivoting: up to N rounds per factorization moving the\n"
        "                                blocks with perturbed pivots to the end (0..%d) [%d]\n"
        "  --tol TOL                     true relative residual target [%g]\n"
        "  --maxit N                     SQMR iteration limit [%d]\n"
        "  --threads N                   CPU threads, 0 = all [%d]\n"
        "  --rhs FILE                    right-hand side (Matrix Market array or one value per line)\n"
        "  --repeat N                    run setup+factor+solve N times, report median times [1]\n"
        "  --time-apply N                afterwards apply the preconditioner N times (ildl_apply,\n"
        "                                host vectors), report the median as apply_s [0]\n"
        "  --apply-columns K             with --time-apply: K vectors per call (ildl_apply_multi) [1]\n"
        "  --time-columns K              afterwards solve K right-hand sides (b and A v_j for\n"
        "                                random v_j) by K ildl_solve calls and by one ildl_solve_multi,\n"
        "                                report both times and whether every column's x agrees [0]\n"
        "  --json                        also print the summary as one JSON object (last line)\n"
        "  --history                     with --json: add SQMR's residual estimates (\"history\")\n"
        "  --quiet                       print only the JSON line (with --json) or nothing\n"
        "  -v, --verbose                 log phases (twice: every iteration)\n"
        "  --help                        this text\n"
        "  --version                     library version\n\n"
        "exit status: 0 converged, 1 not converged, 2 error\n",
        name_of(backends, d.backend), name_of(orderings, d.ordering), name_of(blockings, d.blocking),
        name_of(scalings, d.scaling), d.fill_level, d.fill_factor, d.drop_tol, name_of(pivots, d.pivoting),
        name_of(methods, d.method), ILDL_MAX_FP_SWEEPS, d.fp_sweeps, d.fp_eps, d.fp_delta, name_of(precisions, d.precision), d.max_block_size, d.block_threshold, name_of(leftovers, d.leftover),
        name_of(schedules, d.solve_schedule), name_of(schedules, d.factor_schedule), name_of(solve_kernels, d.solve_kernels),
        name_of(l2_persists, d.l2_persist), name_of(escalations, d.escalation), name_of(rung_choices, d.rung_choice), d.escalation_max_bytes,
        d.escalation_max_seconds, ILDL_MAX_PUSHBACK_ROUNDS, d.pushback_rounds,
        d.tol, d.max_iter,
        d.num_threads);
}

typedef struct {
    double start, last;
    int quiet;
    int record, nhist, cap; /* --history: (iteration, estimate) pairs of the last run */
    double *hist;
} progress_state;

/* Progress on long runs: one line on stderr every 2 s once a solve has run 2 s; with
 * --history also keeps every estimate the backend reports. */
static void progress(void *ctx, int it, double est)
{
    progress_state *p = ctx;
    if (p->record) {
        if (p->nhist == p->cap) {
            int cap = p->cap ? 2 * p->cap : 256;
            double *h = realloc(p->hist, sizeof(double) * 2 * (size_t)cap);
            if (!h) p->record = 0; /* history is best effort: the solve goes on */
            else {
                p->hist = h;
                p->cap = cap;
            }
        }
        if (p->record) {
            p->hist[2 * p->nhist] = it;
            p->hist[2 * p->nhist + 1] = est;
            p->nhist++;
        }
    }
    double now = ildl_wtime();
    if (p->quiet || now - p->start < 2.0 || now - p->last < 2.0) return;
    p->last = now;
    fprintf(stderr, "  ... iteration %d, estimated relative residual %.2e (%.0f s)\n", it, est, now - p->start);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..m-1] (sorts v). */
static double median(double *v, int m)
{
    qsort(v, (size_t)m, sizeof(double), cmp_double);
    return (m % 2) ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fprintf(f, "null");
}

/* ildl stats FILE [--max-level L] [--block-size B] [--block-threshold C] [--svg PREFIX] */
static int stats_main(int argc, char **argv)
{
    const char *file = NULL, *prefix = NULL;
    int maxlf = 5, bs = 32;
    double thr = 0.0;
    ildl_options d;
    ildl_options_default(&d);
    thr = d.block_threshold;
    for (int a = 2; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        int bad = 0;
        if (!strcmp(o, "--max-level") && v) { bad = parse_int(o, v, &maxlf); a++; }
        else if (!strcmp(o, "--block-size") && v) { bad = parse_int(o, v, &bs); a++; }
        else if (!strcmp(o, "--block-threshold") && v) { bad = parse_double(o, v, &thr); a++; }
        else if (!strcmp(o, "--svg") && v) { prefix = v; a++; }
        else if (o[0] != '-' && !file) file = o;
        else { fprintf(stderr, "ildl stats: unknown or incomplete option '%s'\n", o); return 2; }
        if (bad) return 2;
    }
    if (!file || maxlf < 0 || maxlf > 20 || bs < 1 || bs > 32) {
        fprintf(stderr, "usage: ildl stats FILE.mtx[.gz] [--max-level 0..20 (5)] [--block-size 1..32 (32)] "
                        "[--block-threshold C (%g)] [--svg PREFIX]\n", d.block_threshold);
        return 2;
    }
    char msg[512];
    ildl_csr A;
    int st = ildl_mm_read(file, &A, msg, sizeof msg);
    if (st) { fprintf(stderr, "ildl stats: %s: %s\n", ildl_strerror(st), msg); return 2; }
    /* the checks of ildl_setup (empty rows, symmetry, values): the study assumes a valid matrix */
    st = ildl_csr_validate(A.n, A.rowptr, A.col, A.val, 1e-10, msg, sizeof msg);
    if (st) {
        fprintf(stderr, "ildl stats: %s: %s\n", ildl_strerror(st), msg);
        ildl_csr_free(&A);
        return 2;
    }
    printf("matrix %s: n = %d, nnz = %lld, block size <= %d, cosine threshold %g\n", file, (int)A.n,
           (long long)A.rowptr[A.n], bs, thr);
    const char *base = strrchr(file, '/');
    st = ildl_stats_run(&A, base ? base + 1 : file, maxlf, bs, thr, prefix);
    ildl_csr_free(&A);
    return st ? 2 : 0;
}

/* Median seconds of m applications of the preconditioner of h to r (host vectors); NaN when
 * out of memory or an application fails. */
/* The median of m applications of the preconditioner to `cols` copies of r (ildl_apply_multi
 * when cols > 1), per call. */
static double time_applies(ildl_handle *h, const double *r, int32_t n, int m, int cols)
{
    double *R = malloc(sizeof(double) * (size_t)n * cols), *Z = malloc(sizeof(double) * (size_t)n * cols);
    double *t = malloc(sizeof(double) * (size_t)m), med = NAN;
    int ok = R && Z && t;
    for (int j = 0; ok && j < cols; j++) memcpy(R + (size_t)j * n, r, sizeof(double) * (size_t)n);
    for (int k = 0; ok && k < m; k++) {
        double t0 = ildl_wtime();
        ok = (cols > 1 ? ildl_apply_multi(h, cols, R, n, Z, n, ILDL_MEMORY_HOST, NULL)
                       : ildl_apply(h, r, Z, ILDL_MEMORY_HOST, NULL)) == ILDL_SUCCESS;
        t[k] = ildl_wtime() - t0;
    }
    if (ok) med = median(t, m);
    free(R);
    free(Z);
    free(t);
    return med;
}

/* K right-hand sides (b, then A v_j with v_j uniform in [-1, 1)) solved by K ildl_solve calls
 * and by one ildl_solve_multi: their times, the columns solved by the multi call, and whether
 * every column's x is the same, bit for bit. Returns 0, or -1 when out of memory. */
static int time_columns(ildl_handle *h, const ildl_csr *A, const double *b, int k, double *t_single, double *t_multi,
                        int *conv, int *same)
{
    int32_t n = A->n;
    size_t nk = (size_t)n * k;
    double *B = malloc(sizeof(double) * nk), *X1 = malloc(sizeof(double) * nk), *X2 = malloc(sizeof(double) * nk);
    double *v = malloc(sizeof(double) * (size_t)n);
    ildl_column_result *cr = malloc(sizeof *cr * (size_t)k);
    int ok = B && X1 && X2 && v && cr;
    uint64_t seed = 12345;
    if (ok) memcpy(B, b, sizeof(double) * (size_t)n);
    for (int j = 1; ok && j < k; j++) {
        for (int32_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            v[i] = (double)(seed >> 11) * 0x1p-52 - 1.0;
        }
        ildl_csr_matvec(A, v, B + (size_t)n * j);
    }
    if (ok) {
        memset(X1, 0, sizeof(double) * nk);
        memset(X2, 0, sizeof(double) * nk);
        double t0 = ildl_wtime();
        for (int j = 0; j < k; j++) (void)ildl_solve(h, B + (size_t)n * j, X1 + (size_t)n * j);
        *t_single = ildl_wtime() - t0;
        t0 = ildl_wtime();
        (void)ildl_solve_multi(h, k, B, n, X2, n, cr);
        *t_multi = ildl_wtime() - t0;
        *conv = 0;
        for (int j = 0; j < k; j++) *conv += cr[j].status == ILDL_SUCCESS;
        *same = memcmp(X1, X2, sizeof(double) * nk) == 0;
    }
    free(B); free(X1); free(X2); free(v); free(cr);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) { usage(stdout); return 0; }
    if (!strcmp(argv[1], "--version")) { printf("ildl (libblockildl) %s\n", ildl_version()); return 0; }
    if (strcmp(argv[1], "stats") == 0) return stats_main(argc, argv);
    if (strcmp(argv[1], "solve") != 0) { fprintf(stderr, "ildl: unknown command '%s'\n", argv[1]); usage(stderr); return 2; }

    ildl_options opt;
    ildl_options_default(&opt);
    const char *file = NULL, *rhs = NULL;
    int json = 0, quiet = 0, repeat = 1, history = 0, time_apply = 0, apply_columns = 1, time_cols = 0;
    double t_cols_single = NAN, t_cols_multi = NAN;
    int cols_conv = 0, cols_same = 0, info_kept = 0;
    for (int a = 2; a < argc; a++) {
        const char *o = argv[a];
        const char *v = (a + 1 < argc) ? argv[a + 1] : NULL;
        int bad = 0, used = 1;
#define NEEDV if (!v) { fprintf(stderr, "ildl: %s needs a value\n", o); return 2; }
        if (!strcmp(o, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(o, "--json")) { json = 1; used = 0; }
        else if (!strcmp(o, "--history")) { history = 1; used = 0; }
        else if (!strcmp(o, "--quiet")) { quiet = 1; used = 0; }
        else if (!strcmp(o, "-v") || !strcmp(o, "--verbose")) { opt.verbosity++; used = 0; }
        else if (!strcmp(o, "--backend")) { NEEDV bad = parse_named(backends, o, v, &opt.backend); }
        else if (!strcmp(o, "--ordering")) { NEEDV bad = parse_named(orderings, o, v, &opt.ordering); }
        else if (!strcmp(o, "--blocking")) { NEEDV bad = parse_named(blockings, o, v, &opt.blocking); }
        else if (!strcmp(o, "--scaling")) { NEEDV bad = parse_named(scalings, o, v, &opt.scaling); }
        else if (!strcmp(o, "--pivot")) { NEEDV bad = parse_named(pivots, o, v, &opt.pivoting); }
        else if (!strcmp(o, "--method")) { NEEDV bad = parse_named(methods, o, v, &opt.method); }
        else if (!strcmp(o, "--fp-sweeps")) { NEEDV bad = parse_int(o, v, &opt.fp_sweeps); }
        else if (!strcmp(o, "--fp-eps")) { NEEDV bad = parse_double(o, v, &opt.fp_eps); }
        else if (!strcmp(o, "--fp-delta")) { NEEDV bad = parse_double(o, v, &opt.fp_delta); }
        else if (!strcmp(o, "--precision")) { NEEDV bad = parse_named(precisions, o, v, &opt.precision); }
        else if (!strcmp(o, "--leftover")) { NEEDV bad = parse_named(leftovers, o, v, &opt.leftover); }
        else if (!strcmp(o, "--schedule")) { NEEDV bad = parse_named(schedules, o, v, &opt.solve_schedule); }
        else if (!strcmp(o, "--factor-schedule")) { NEEDV bad = parse_named(schedules, o, v, &opt.factor_schedule); }
        else if (!strcmp(o, "--solve-kernels")) { NEEDV bad = parse_named(solve_kernels, o, v, &opt.solve_kernels); }
        else if (!strcmp(o, "--l2-persist")) { NEEDV bad = parse_named(l2_persists, o, v, &opt.l2_persist); }
        else if (!strcmp(o, "--escalation")) { NEEDV bad = parse_named(escalations, o, v, &opt.escalation); }
        else if (!strcmp(o, "--rung-choice")) { NEEDV bad = parse_named(rung_choices, o, v, &opt.rung_choice); }
        else if (!strcmp(o, "--escalation-max-bytes")) { NEEDV bad = parse_double(o, v, &opt.escalation_max_bytes); }
        else if (!strcmp(o, "--escalation-max-seconds")) { NEEDV bad = parse_double(o, v, &opt.escalation_max_seconds); }
        else if (!strcmp(o, "--pushback")) { NEEDV bad = parse_int(o, v, &opt.pushback_rounds); }
        else if (!strcmp(o, "--fill-level")) { NEEDV bad = parse_int(o, v, &opt.fill_level); }
        else if (!strcmp(o, "--fill-factor")) { NEEDV bad = parse_double(o, v, &opt.fill_factor); }
        else if (!strcmp(o, "--threshold")) { NEEDV bad = parse_double(o, v, &opt.drop_tol); }
        else if (!strcmp(o, "--block-size")) { NEEDV bad = parse_int(o, v, &opt.max_block_size); }
        else if (!strcmp(o, "--block-threshold")) { NEEDV bad = parse_double(o, v, &opt.block_threshold); }
        else if (!strcmp(o, "--tol")) { NEEDV bad = parse_double(o, v, &opt.tol); }
        else if (!strcmp(o, "--maxit")) { NEEDV bad = parse_int(o, v, &opt.max_iter); }
        else if (!strcmp(o, "--threads")) { NEEDV bad = parse_int(o, v, &opt.num_threads); }
        else if (!strcmp(o, "--rhs")) { NEEDV rhs = v; }
        else if (!strcmp(o, "--repeat")) { NEEDV bad = parse_int(o, v, &repeat); if (!bad && repeat < 1) { fprintf(stderr, "ildl: --repeat must be >= 1\n"); return 2; } }
        else if (!strcmp(o, "--time-columns")) { NEEDV bad = parse_int(o, v, &time_cols); if (!bad && time_cols < 0) { fprintf(stderr, "ildl: --time-columns must be >= 0\n"); return 2; } }
        else if (!strcmp(o, "--apply-columns")) { NEEDV bad = parse_int(o, v, &apply_columns); if (!bad && apply_columns < 1) { fprintf(stderr, "ildl: --apply-columns must be >= 1\n"); return 2; } }
        else if (!strcmp(o, "--time-apply")) { NEEDV bad = parse_int(o, v, &time_apply); if (!bad && time_apply < 0) { fprintf(stderr, "ildl: --time-apply must be >= 0\n"); return 2; } }
        else if (o[0] == '-') { fprintf(stderr, "ildl: unknown option '%s' (see ildl --help)\n", o); return 2; }
        else if (!file) { file = o; used = 0; }
        else { fprintf(stderr, "ildl: unexpected argument '%s'\n", o); return 2; }
#undef NEEDV
        if (bad) return 2;
        a += used;
    }
    if (!file) { fprintf(stderr, "ildl: solve needs a matrix file\n"); usage(stderr); return 2; }

    char msg[512] = "";
    ildl_csr A = {0};
    double *b = NULL, *x = NULL, *ones = NULL;
    ildl_handle *h = NULL;
    ildl_info info;
    memset(&info, 0, sizeof info);
    int status = ILDL_SUCCESS, exit_code = 2;
    double err_ones = NAN, t_read = ildl_wtime(), t_apply = NAN;
    const char *phase = "read";
    progress_state ps = {0.0, 0.0, quiet, history, 0, 0, NULL};
    int median_times = 0;
    double med[4] = {0, 0, 0, 0};

    status = ildl_mm_read(file, &A, msg, sizeof msg);
    t_read = ildl_wtime() - t_read;
    if (status) goto report;
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    x = calloc((size_t)n, sizeof(double));
    if (rhs) {
        int32_t nb = 0;
        status = ildl_mm_read_vector(rhs, n, &b, &nb, msg, sizeof msg); /* length n or refused */
        if (!status && nb != n) {
            snprintf(msg, sizeof msg, "%s has %d entries but the matrix has n = %d", rhs, (int)nb, (int)n);
            status = ILDL_ERR_SIZE_MISMATCH;
        }
        if (status) goto report;
    } else {
        b = malloc(sizeof(double) * (size_t)n);
        ones = malloc(sizeof(double) * (size_t)n);
        if (!b || !ones) { status = ILDL_ERR_OUT_OF_MEMORY; goto report; }
        for (int32_t i = 0; i < n; i++) ones[i] = 1.0;
        ildl_csr_matvec(&A, ones, b);
    }
    if (!x) { status = ILDL_ERR_OUT_OF_MEMORY; goto report; }
    if (!quiet) printf("matrix   %s\n         n = %d, nnz = %lld (full symmetric pattern), read in %.3f s\n",
                       file, (int)n, (long long)nnz, t_read);

    opt.progress_fn = progress;
    opt.progress_ctx = &ps;
    double *ts = malloc(sizeof(double) * 4 * (size_t)repeat);
    if (!ts) { status = ILDL_ERR_OUT_OF_MEMORY; goto report; }
    for (int rep = 0; rep < repeat; rep++) {
        if (h) { ildl_destroy(h); h = NULL; }
        phase = "setup";
        status = ildl_setup(n, A.rowptr, A.col, A.val, &opt, &h);
        if (status) { snprintf(msg, sizeof msg, "%s", ildl_last_error(NULL)); break; }
        phase = "factor";
        status = ildl_factor(h, NULL);
        if (status) { snprintf(msg, sizeof msg, "%s", ildl_last_error(h)); break; }
        phase = "solve";
        ps.start = ildl_wtime();
        ps.nhist = 0;
        status = ildl_solve(h, b, x);
        if (status) snprintf(msg, sizeof msg, "%s", ildl_last_error(h));
        ildl_get_info(h, &info);
        ts[rep] = info.setup_seconds;
        ts[repeat + rep] = info.factor_seconds;
        ts[2 * repeat + rep] = info.solve_seconds;
        ts[3 * repeat + rep] = info.iterate_seconds;
        if (status && status != ILDL_ERR_NOT_CONVERGED && status != ILDL_ERR_BREAKDOWN) break;
    }
    if (h && repeat > 1 && (status == ILDL_SUCCESS || status == ILDL_ERR_NOT_CONVERGED || status == ILDL_ERR_BREAKDOWN)) {
        median_times = 1;
        med[0] = median(ts, repeat);
        med[1] = median(ts + repeat, repeat);
        med[2] = median(ts + 2 * repeat, repeat);
        med[3] = median(ts + 3 * repeat, repeat);
    }
    free(ts);
    if (h && time_apply > 0 && (status == ILDL_SUCCESS || status == ILDL_ERR_NOT_CONVERGED || status == ILDL_ERR_BREAKDOWN))
        t_apply = time_applies(h, b, n, time_apply, apply_columns);
    if (h && time_cols > 0 && (status == ILDL_SUCCESS || status == ILDL_ERR_NOT_CONVERGED || status == ILDL_ERR_BREAKDOWN)) {
        ildl_get_info(h, &info); /* the report is the main solve's */
        info_kept = 1;
        if (time_columns(h, &A, b, time_cols, &t_cols_single, &t_cols_multi, &cols_conv, &cols_same)) {
            status = ILDL_ERR_OUT_OF_MEMORY;
            snprintf(msg, sizeof msg, "out of memory for --time-columns");
        }
    }
    if (ones) {
        double e = 0;
        for (int32_t i = 0; i < n; i++) e = fmax(e, fabs(x[i] - 1.0));
        err_ones = e;
    }

report:
    if (h && !info_kept) ildl_get_info(h, &info);
    if (median_times) {
        info.setup_seconds = med[0];
        info.factor_seconds = med[1];
        info.solve_seconds = med[2];
        info.iterate_seconds = med[3];
    }
    int converged = h && info.converged;
    /* the solve ran (its residual is one): not after a failed read, setup, factor or a refused b */
    int solved = h && (status == ILDL_SUCCESS || status == ILDL_ERR_NOT_CONVERGED || status == ILDL_ERR_BREAKDOWN);
    exit_code = (status == ILDL_SUCCESS && converged) ? 0 : (status == ILDL_ERR_NOT_CONVERGED || status == ILDL_ERR_BREAKDOWN) ? 1 : 2;
    if (!quiet) {
        if (h) {
            printf("backend  %s%s%s%s, scaling %s, ordering %s%s%s%s, blocking %s, pivot %s, l_f %d, r_f %g, tau %g, precision %s\n",
                   name_of(backends, info.backend), info.device_name[0] ? " (" : "", info.device_name,
                   info.device_name[0] ? ")" : "", name_of(scalings, opt.scaling), name_of(orderings, opt.ordering),
                   opt.ordering == ILDL_ORDER_AUTO ? " (" : "",
                   opt.ordering == ILDL_ORDER_AUTO ? name_of(orderings, info.ordering_used) : "",
                   opt.ordering == ILDL_ORDER_AUTO ? ")" : "",
                   name_of(blockings, opt.blocking),
                   name_of(pivots, opt.pivoting), opt.fill_level, opt.fill_factor, opt.drop_tol, name_of(precisions, opt.precision));
            printf("analyse  %d blocks (mean %.1f rows), %lld tiles (%lld fill), %d levels, capacity %lld\n",
                   (int)info.num_blocks, info.mean_block_size, (long long)info.num_tiles, (long long)info.num_fill_tiles,
                   (int)info.num_levels, (long long)info.factor_capacity);
            printf("factor   nnz %lld (fill %.2f), 2x2 pivots %d, perturbed %d, inertia (+%d, -%d, 0:%d)\n",
                   (long long)info.factor_nnz, info.fill, (int)info.num_2x2_pivots, (int)info.num_perturbed,
                   (int)info.inertia_pos, (int)info.inertia_neg, (int)info.inertia_zero);
            if (opt.method == ILDL_METHOD_FIXED_POINT)
                printf("sweeps   %d fixed-point sweeps, ||A - U^T D U||_F / ||A||_F on the pattern %.3e\n",
                       opt.fp_sweeps, info.fp_residual);
            if (info.pushback_rounds > 0)
                printf("pushback %d rounds, %d blocks pushed to the end\n", (int)info.pushback_rounds,
                       (int)info.pushback_blocks);
            printf("time     setup %.4f s, factor %.4f s, solve %.4f s (iterations %.4f s)%s\n", info.setup_seconds,
                   info.factor_seconds, info.solve_seconds, info.iterate_seconds, median_times ? " (medians)" : "");
            if (solved)
                printf("sqmr     %d iterations, true relative residual %.3e (%s)\n", info.iterations,
                       info.true_residual, converged ? "converged" : "NOT converged");
            if (solved && (info.rung > 0 || info.rung_iterations[1] >= 0 || info.rung_factor_nnz[1] >= 0))
                for (int r = 0; r < ILDL_MAX_RUNGS; r++)
                    if (info.rung_iterations[r] >= 0 || info.rung_factor_nnz[r] >= 0)
                        printf("ladder   rung %d: %lld iterations, factor %lld entries, %.4f s%s\n", r,
                               (long long)info.rung_iterations[r], (long long)info.rung_factor_nnz[r],
                               info.rung_seconds[r], info.rung_iterations[r] < 0 ? " (not taken)" : "");
            if (isfinite(err_ones)) printf("error    max |x - 1| = %.3e\n", err_ones);
            if (time_cols != 0)
                printf("columns  %d right-hand sides: %d ildl_solve calls %.4f s, one ildl_solve_multi %.4f s (%.2fx), "
                       "%d converged, x %s\n", time_cols, time_cols, t_cols_single, t_cols_multi,
                       t_cols_single / t_cols_multi, cols_conv, cols_same ? "bitwise equal" : "DIFFERS");
        }
        if (status) fprintf(stderr, "ildl: %s failed: %s: %s\n", phase, ildl_strerror(status), msg);
        else printf("status   %s\n", "success");
    }
    if (json) {
        printf("{\"matrix\":");
        json_string(stdout, file);
        printf(",\"n\":%d,\"nnz\":%lld,\"backend\":", (int)A.n, (long long)(A.rowptr ? A.rowptr[A.n] : 0));
        json_string(stdout, h ? name_of(backends, info.backend) : name_of(backends, opt.backend));
        printf(",\"device\":");
        json_string(stdout, h ? info.device_name : "");
        printf(",\"status\":");
        json_string(stdout, status ? ildl_strerror(status) : "success");
        printf(",\"status_code\":%d,\"phase\":", status);
        json_string(stdout, phase);
        printf(",\"message\":");
        json_string(stdout, msg);
        printf(",\"converged\":%s,\"iterations\":%d,\"true_residual\":", converged ? "true" : "false", info.iterations);
        json_number(stdout, solved ? info.true_residual : NAN);
        printf(",\"error_vs_ones\":");
        json_number(stdout, err_ones);
        printf(",\"setup_s\":");
        json_number(stdout, info.setup_seconds);
        printf(",\"factor_s\":");
        json_number(stdout, info.factor_seconds);
        printf(",\"solve_s\":");
        json_number(stdout, info.solve_seconds);
        printf(",\"iterate_s\":");
        json_number(stdout, info.iterate_seconds);
        printf(",\"blocks\":%d,\"levels\":%d,\"tiles\":%lld,\"factor_nnz\":%lld,\"fill\":", (int)info.num_blocks,
               (int)info.num_levels, (long long)info.num_tiles, (long long)info.factor_nnz);
        json_number(stdout, info.fill);
        printf(",\"repeat\":%d,\"device_bytes\":%zu,\"schedule\":\"%s\",\"method\":\"%s\"", repeat,
               info.device_bytes, name_of(schedules, opt.solve_schedule), name_of(methods, opt.method));
        printf(",\"perturbed\":%d,\"pivots_2x2\":%d,\"ordering\":\"%s\",\"blocking\":\"%s\",\"pivot\":\"%s\","
               "\"scaling\":\"%s\",\"fill_level\":%d,\"fill_factor\":%g,\"threshold\":%g,\"precision\":\"%s\"",
               (int)info.num_perturbed, (int)info.num_2x2_pivots, name_of(orderings, opt.ordering),
               name_of(blockings, opt.blocking), name_of(pivots, opt.pivoting), name_of(scalings, opt.scaling),
               opt.fill_level, opt.fill_factor,
               opt.drop_tol, name_of(precisions, opt.precision));
        printf(",\"ordering_used\":\"%s\",\"factor_schedule\":\"%s\"", name_of(orderings, info.ordering_used),
               name_of(schedules, info.factor_schedule));
        if (opt.method == ILDL_METHOD_FIXED_POINT) {
            printf(",\"fp_sweeps\":%d,\"fp_eps\":%g,\"fp_delta\":%g,\"fp_residual\":", opt.fp_sweeps, opt.fp_eps,
                   opt.fp_delta);
            json_number(stdout, info.fp_residual);
        }
        printf(",\"pushback\":%d,\"pushback_rounds\":%d,\"pushback_blocks\":%d", opt.pushback_rounds,
               (int)info.pushback_rounds, (int)info.pushback_blocks);
        printf(",\"escalation\":\"%s\",\"rung_choice\":\"%s\",\"rung\":%d,\"rung_iterations\":[%lld,%lld,%lld],"
               "\"rung_factor_nnz\":[%lld,%lld,%lld],\"rung_seconds\":[", name_of(escalations, opt.escalation),
               name_of(rung_choices, opt.rung_choice),
               (int)info.rung, (long long)info.rung_iterations[0], (long long)info.rung_iterations[1],
               (long long)info.rung_iterations[2], (long long)info.rung_factor_nnz[0],
               (long long)info.rung_factor_nnz[1], (long long)info.rung_factor_nnz[2]);
        for (int r = 0; r < ILDL_MAX_RUNGS; r++) {
            if (r) printf(",");
            json_number(stdout, info.rung_seconds[r]);
        }
        printf("]");
        printf(",\"tol\":%g,\"maxit\":%d", opt.tol, opt.max_iter);
        printf(",\"read_s\":");
        json_number(stdout, t_read);
        if (time_apply > 0) {
            printf(",\"apply_s\":");
            json_number(stdout, t_apply);
            printf(",\"apply_columns\":%d", apply_columns);
        }
        if (time_cols != 0) {
            printf(",\"columns\":%d,\"columns_single_s\":", time_cols);
            json_number(stdout, t_cols_single);
            printf(",\"columns_multi_s\":");
            json_number(stdout, t_cols_multi);
            printf(",\"columns_converged\":%d,\"columns_bitwise\":%s", cols_conv, cols_same ? "true" : "false");
        }
        printf(",\"setup_phases\":{\"scale\":%.6f,\"order_block\":%.6f,\"fill\":%.6f,\"levels\":%.6f,"
               "\"tiles\":%.6f,\"upload\":%.6f}", info.t_scale, info.t_order + info.t_block, info.t_fill,
               info.t_levels, info.t_tiles, info.t_upload);
        if (history) {
            printf(",\"history\":[");
            for (int k = 0; k < ps.nhist; k++) {
                printf("%s[%d,", k ? "," : "", (int)ps.hist[2 * k]);
                json_number(stdout, ps.hist[2 * k + 1]);
                printf("]");
            }
            printf("]");
        }
        printf("}\n");
    }
    free(ps.hist);
    ildl_destroy(h);
    ildl_csr_free(&A);
    free(b); free(x); free(ones);
    return exit_code;
}
