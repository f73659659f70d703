/* ildl_gen_main.c -- the ildl-gen command: write a generated matrix as Matrix Market.
 *   ildl-gen kkt-lp FILE.mps[.gz] OUT.mtx[.gz] [--seed S] [--delta D] [--decades K] [--slacks]
 *                   [--fixed|--free]
 *   ildl-gen control N OUT [--beta B]
 *   ildl-gen stokes N OUT [--eps E] [--pin]
 *   ildl-gen helmholtz N OUT [--sigma S]
 * Prints n, nnz and the inertia where it is known analytically; any error: a message on
 * stderr and exit status 2. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "gen.h"
#include "io/mmio.h"

static const char *usage =
    "usage: ildl-gen kkt-lp FILE.mps[.gz] OUT.mtx[.gz] [--seed S] [--delta D] [--decades K]"
    " [--slacks] [--fixed|--free]\n"
    "           (D = diag(10^(-K u)), u uniform in [0,1): K decades, default 6, 0 <= K <= 300)\n"
    "       ildl-gen control N OUT.mtx[.gz] [--beta B]      (default beta 1e-2)\n"
    "       ildl-gen stokes N OUT.mtx[.gz] [--eps E] [--pin] (default eps 0)\n"
    "       ildl-gen helmholtz N OUT.mtx[.gz] [--sigma S]   (default: mid-spectrum gap)\n"
    "Formulas: docs/generators.md. Output: lower triangle, gzip if OUT ends in .gz.\n";

static int die(const char *fmt, const char *arg)
{
    fprintf(stderr, "ildl-gen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 2;
}

static int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return s[0] && !*end && !errno && isfinite(*v);
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    if (s[0] == '-') return 0;
    unsigned long long x = strtoull(s, &end, 0);
    *v = (uint64_t)x;
    return s[0] && !*end && !errno;
}

static int parse_n(const char *s, int32_t *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    *v = (int32_t)x;
    return s[0] && !*end && !errno && x >= 1 && x <= 100000;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (argc < 4) {
        fputs(usage, stderr);
        return 2;
    }
    const char *kind = argv[1], *out = argv[3];
    int is_lp = strcmp(kind, "kkt-lp") == 0;
    int32_t N = 0;
    if (!is_lp && strcmp(kind, "control") && strcmp(kind, "stokes") && strcmp(kind, "helmholtz"))
        return die("unknown generator '%s' (kkt-lp, control, stokes, helmholtz)", kind);
    if (!is_lp && !parse_n(argv[2], &N)) return die("N must be a positive integer, got '%s'", argv[2]);
    ildl_gen_kkt_opts ko;
    ildl_gen_kkt_defaults(&ko);
    double beta = 1e-2, eps = 0.0, sigma = NAN;
    int pin = 0;
    for (int a = 4; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        int ok = 1, takes = 1;
        if (is_lp && strcmp(o, "--seed") == 0) ok = v && parse_u64(v, &ko.seed);
        else if (is_lp && strcmp(o, "--delta") == 0) ok = v && parse_double(v, &ko.delta) && ko.delta >= 0;
        else if (is_lp && strcmp(o, "--decades") == 0) {
            if (!v) return die("%s needs a value (see ildl-gen --help)", o);
            if (!parse_double(v, &ko.decades) || ko.decades < 0 || ko.decades > ILDL_GEN_KKT_DECADES_MAX)
                return die("--decades must be a finite number from 0 to 300, got '%s'", v);
        }
        else if (is_lp && strcmp(o, "--slacks") == 0) ko.slacks = 1, takes = 0;
        else if (is_lp && strcmp(o, "--fixed") == 0) ko.dialect = ILDL_GEN_MPS_FIXED, takes = 0;
        else if (is_lp && strcmp(o, "--free") == 0) ko.dialect = ILDL_GEN_MPS_FREE, takes = 0;
        else if (!strcmp(kind, "control") && strcmp(o, "--beta") == 0) ok = v && parse_double(v, &beta) && beta > 0;
        else if (!strcmp(kind, "stokes") && strcmp(o, "--eps") == 0) ok = v && parse_double(v, &eps) && eps >= 0;
        else if (!strcmp(kind, "stokes") && strcmp(o, "--pin") == 0) pin = 1, takes = 0;
        else if (!strcmp(kind, "helmholtz") && strcmp(o, "--sigma") == 0) ok = v && parse_double(v, &sigma);
        else return die("unknown option '%s' for this generator (see ildl-gen --help)", o);
        if (!ok) return die("bad or missing value for %s", o);
        a += takes;
    }

    char msg[512] = "";
    ildl_csr K;
    ildl_gen_info info;
    ildl_gen_lp_stats ls;
    memset(&info, 0, sizeof info);
    double t0 = ildl_wtime();
    int st;
    if (is_lp) {
        st = ildl_gen_kkt_lp_file(argv[2], &ko, &K, &info, &ls, msg, sizeof msg);
    } else if (!strcmp(kind, "control")) {
        st = ildl_gen_control(N, beta, &K, &info, msg, sizeof msg);
    } else if (!strcmp(kind, "stokes")) {
        st = ildl_gen_stokes(N, eps, pin, &K, &info, msg, sizeof msg);
    } else {
        if (isnan(sigma)) sigma = ildl_gen_helmholtz_default_sigma(N);
        st = ildl_gen_helmholtz(N, sigma, &K, &info, msg, sizeof msg);
    }
    if (st) return die("%s", msg[0] ? msg : "generation failed");
    double t1 = ildl_wtime();
    if (is_lp)
        printf("LP: %d x %d read, %d empty and %d duplicate rows removed -> A %d x %d, nnz %" PRId64
               "%s, D over %g decades\n",
               (int)ls.m_read, (int)ls.n_read, (int)ls.empty_rows, (int)ls.dup_rows, (int)ls.m,
               (int)ls.n, ls.nnz_a, ko.slacks ? " (with slacks)" : "", ko.decades);
    printf("%s: n = %" PRId64 ", nnz = %" PRId64 " (full pattern), parameter %.17g\n", kind,
           info.n, info.nnz, info.param);
    if (info.inertia_status == ILDL_GEN_INERTIA_UNKNOWN)
        printf("inertia: unknown%s\n", is_lp ? " (more rows than columns: K is singular)" : "");
    else
        printf("inertia (+, -, 0) = (%" PRId64 ", %" PRId64 ", %" PRId64 ")%s\n", info.inertia[0],
               info.inertia[1], info.inertia[2],
               info.inertia_status == ILDL_GEN_INERTIA_IF_FULL_RANK ? " if A has full row rank"
                                                                   : "");
    if (info.inertia[2] > 0 && info.inertia_status == ILDL_GEN_INERTIA_EXACT)
        printf("warning: K is singular\n");
    st = ildl_mm_write(out, &K, msg, sizeof msg);
    ildl_csr_free(&K);
    if (st) return die("%s", msg);
    printf("generated in %.2f s, written to %s in %.2f s\n", t1 - t0, out, ildl_wtime() - t1);
    return 0;
}
