/* gen.h -- deterministic generators of large sparse symmetric indefinite test matrices
 * (library ildl_gen, command ildl-gen). Every generator returns an ildl_csr with the full
 * symmetric pattern, sorted columns, no duplicates and int64 row pointers; rows are built
 * twice (count, then fill) so nothing larger than the result is ever held. Formulas:
 * docs/generators.md. All functions return ILDL_* status codes and never print.
 *
 *  (1) LP interior-point KKT:   K = [ D  A^T ; A  -delta I ],  d_j = 10^(-K u_j), u_j ~ U[0,1)
 *      from a seeded xoshiro256**, K decades (default 6); A from an MPS file, empty and
 *      duplicate (parallel) rows removed, 4 rounds of geometric row/column scaling.
 *  (2) 3D optimal control (nlpkkt-like) on N^3 interior nodes, h = 1/(N+1):
 *      K = [ M 0 L^T ; 0 beta M  -M ; L  -M  0 ],  M = h^3 I,  L = h * (7-point stencil 6,-1).
 *  (3) 3D Stokes, MAC grid of N^3 cells, h = 1/N, no-slip walls:
 *      K = [ A  B^T ; B  -eps I ],  A = vector Laplacian / h^2 on interior faces,
 *      B = -divergence / h; optional pin of pressure cell 0 (extra -1 on its diagonal).
 *  (4) shifted 3D Laplacian on N^3 interior nodes: K = T - sigma I, T = 7-point stencil (6,-1).
 */
#ifndef ILDL_BENCH_GEN_H
#define ILDL_BENCH_GEN_H
#include <stddef.h>
#include <stdint.h>
#include "core/csr.h"

/* ------------------------------------------------------------------ common */

/* How much is known about the inertia (positive, negative, zero eigenvalue counts). */
enum {
    ILDL_GEN_INERTIA_UNKNOWN = 0,
    ILDL_GEN_INERTIA_EXACT = 1,        /* proven from the block structure */
    ILDL_GEN_INERTIA_IF_FULL_RANK = 2  /* exact if the LP matrix A has full row rank */
};

/* What a generator built: order, stored entries (full pattern) and the analytic inertia. */
typedef struct ildl_gen_info {
    int64_t n, nnz;
    int64_t inertia[3];   /* (+, -, 0) when inertia_status != UNKNOWN */
    int inertia_status;
    double param;         /* the parameter actually used (beta, eps, sigma, delta) */
} ildl_gen_info;

/* Produce row i of a matrix: entries (any order, distinct columns) into col/val; returns the
 * count, at most the maxrow given to ildl_gen_build. */
typedef int (*ildl_gen_row_fn)(const void *ctx, int32_t i, int32_t *col, double *val);

/* Assemble an n x n CSR from a row function: one pass counts, a second fills and sorts.
 * ILDL_SUCCESS, ILDL_ERR_OUT_OF_MEMORY, or ILDL_ERR_INTERNAL (a row repeated a column or
 * exceeded maxrow). */
int ildl_gen_build(int32_t n, int maxrow, ildl_gen_row_fn row, const void *ctx, ildl_csr *A);

/* xoshiro256** seeded through splitmix64: the only source of randomness here. The integer
 * stream is the same everywhere; the KKT diagonal also goes through libm's pow, so equal seeds
 * give bitwise equal matrices with the same C library. */
typedef struct ildl_gen_rng { uint64_t s[4]; } ildl_gen_rng;
void ildl_gen_rng_seed(uint64_t seed, ildl_gen_rng *r);
uint64_t ildl_gen_rng_next(ildl_gen_rng *r);
/* Uniform in [0,1) with 53 random bits. */
double ildl_gen_rng_uniform(ildl_gen_rng *r);

/* ------------------------------------------------------------------ (1) LP / MPS */

/* MPS dialect: AUTO reads whitespace-separated fields and falls back to the fixed column
 * positions on a line whose field count does not fit (names with blanks); FIXED always uses
 * the columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61; FREE never does. */
enum { ILDL_GEN_MPS_AUTO = 0, ILDL_GEN_MPS_FREE = 1, ILDL_GEN_MPS_FIXED = 2 };

/* An LP min obj'x s.t. rowlo <= A x <= rowhi, collo <= x <= colhi. A is m x n in CSR with
 * sorted columns, duplicates summed, explicit zeros dropped. Rows are the E/L/G rows of the
 * ROWS section in file order (N rows excluded; the first N row is the objective); columns are
 * in order of first appearance in COLUMNS. Infinite bounds are +-INFINITY (|v| >= 1e30 too). */
typedef struct ildl_gen_lp {
    char name[64];
    int32_t m, n;
    int64_t *rowptr;        /* [m+1] */
    int32_t *col;           /* [nnz] */
    double *val;            /* [nnz] */
    char *rowtype;          /* [m] 'E', 'L' or 'G' */
    double *rowlo, *rowhi;  /* [m] from RHS and RANGES */
    int32_t *rowid;         /* [m] index of the row among the file's E/L/G rows */
    double *obj;            /* [n] */
    double *collo, *colhi;  /* [n] default [0, +inf) */
    unsigned char *is_int;  /* [n] integer: inside MARKER INTORG/INTEND, or a BV/LI/UI bound */
} ildl_gen_lp;

/* Read an MPS file (plain or gzip) in the given dialect. Sections NAME, ROWS, COLUMNS (with
 * MARKER INTORG/INTEND lines), RHS, RANGES, BOUNDS (UP LO FX FR MI PL BV LI UI SC), ENDATA;
 * OBJSENSE and OBJNAME are skipped, any other section is an error. Of RHS, RANGES and BOUNDS
 * only the first named set is used (lines naming no set always count). Returns ILDL_SUCCESS, ILDL_ERR_IO, ILDL_ERR_FORMAT (msg gives
 * "file:line: reason"), ILDL_ERR_NAN_INF or ILDL_ERR_OUT_OF_MEMORY; lp is zeroed on failure. */
int ildl_gen_mps_read(const char *path, int dialect, ildl_gen_lp *lp, char *msg, size_t msglen);

/* Free the arrays of lp and zero it. */
void ildl_gen_lp_free(ildl_gen_lp *lp);

/* Remove empty rows, then every row that is a scalar multiple of an earlier kept row (same
 * pattern, |a_k b_0 - b_k a_0| <= 1e-12 |a_k b_0| for all k: exact duplicates included).
 * Counts go to *nempty and *ndup (may be NULL). ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_gen_lp_reduce(ildl_gen_lp *lp, int32_t *nempty, int32_t *ndup);

/* rounds of geometric scaling: each row i by r_i = 1/sqrt(max_j |a_ij| * min_j |a_ij|), then
 * each column likewise; bounds, objective and row bounds follow, so the LP is equivalent.
 * rowscale[m] / colscale[n] (may be NULL) receive the accumulated factors (A_new = R A C). */
int ildl_gen_lp_scale(ildl_gen_lp *lp, int rounds, double *rowscale, double *colscale);

/* Standard form: append one slack column per inequality row (+1 for L and ranged rows, -1 for
 * G rows, bounds [0,+inf) or [0, range]); E rows become the only kind. */
int ildl_gen_lp_add_slacks(ildl_gen_lp *lp);

/* The spread of the KKT diagonal D in decades: the default (the paper's six) and the largest
 * accepted (10^-300 is still a normal double). */
#define ILDL_GEN_KKT_DECADES 6.0
#define ILDL_GEN_KKT_DECADES_MAX 300.0

/* K = [ D  A^T ; A  -delta I ] of order n + m, d_j = 10^(-decades u_j) drawn in column order
 * from ildl_gen_rng_seed(seed), so d_j in (10^-decades, 1] log-uniformly. delta == 0 stores no
 * (2,2) entries. Inertia (n, m, 0): exact for delta > 0, else if A has full row rank.
 * ILDL_ERR_EMPTY (m or n is 0), ILDL_ERR_SINGULAR (an empty row of A with delta == 0),
 * ILDL_ERR_INVALID_OPTION (delta < 0 or not finite; decades outside [0, 300] or NaN). */
int ildl_gen_kkt_lp_decades(const ildl_gen_lp *lp, uint64_t seed, double delta, double decades,
                            ildl_csr *K, ildl_gen_info *info, char *msg, size_t msglen);

/* ildl_gen_kkt_lp_decades with decades = ILDL_GEN_KKT_DECADES: d_j = 10^(-6 u_j). */
int ildl_gen_kkt_lp(const ildl_gen_lp *lp, uint64_t seed, double delta, ildl_csr *K,
                    ildl_gen_info *info, char *msg, size_t msglen);

/* The whole pipeline the paper used for its MIPLIB set. */
typedef struct ildl_gen_kkt_opts {
    uint64_t seed;      /* default 1 */
    double delta;       /* default 0 */
    int scale_rounds;   /* default 4 */
    int slacks;         /* default 0: A as in the file */
    int dialect;        /* default ILDL_GEN_MPS_AUTO */
    double decades;     /* default ILDL_GEN_KKT_DECADES (6): spread of D, in [0, 300] */
} ildl_gen_kkt_opts;
void ildl_gen_kkt_defaults(ildl_gen_kkt_opts *o);

/* What the pipeline did to A. */
typedef struct ildl_gen_lp_stats {
    int32_t m_read, n_read, empty_rows, dup_rows, m, n;
    int64_t nnz_a;
} ildl_gen_lp_stats;

/* read -> reduce -> scale -> (slacks) -> ildl_gen_kkt_lp. stats may be NULL. */
int ildl_gen_kkt_lp_file(const char *path, const ildl_gen_kkt_opts *o, ildl_csr *K,
                         ildl_gen_info *info, ildl_gen_lp_stats *stats, char *msg,
                         size_t msglen);

/* ------------------------------------------------------------------ (2)-(4) grids */

/* Optimal control, n = 3 N^3, unknowns ordered y, u, p (each lexicographic x fastest).
 * Inertia (2 N^3, N^3, 0). ILDL_ERR_INVALID_OPTION for N < 1, n > 2^31-1, beta <= 0. */
int ildl_gen_control(int32_t N, double beta, ildl_csr *K, ildl_gen_info *info, char *msg,
                     size_t msglen);

/* Stokes MAC: velocities ux ((N-1) N N), uy, uz, then pressures (N^3); nv = 3 N^2 (N-1).
 * Inertia (nv, N^3, 0) if eps > 0 or pin, else (nv, N^3 - 1, 1) (constant pressure).
 * ILDL_ERR_INVALID_OPTION for N < 2, too large, eps < 0. */
int ildl_gen_stokes(int32_t N, double eps, int pin, ildl_csr *K, ildl_gen_info *info,
                    char *msg, size_t msglen);

/* Shifted Laplacian K = T - sigma I, n = N^3; the eigenvalues of T are
 * mu_i + mu_j + mu_k, mu_i = 4 sin^2(i pi / (2 (N+1))), so the inertia is counted exactly
 * (an eigenvalue within 1e-9 of sigma counts as zero). ILDL_ERR_INVALID_OPTION for N < 1,
 * too large, or sigma not finite. */
int ildl_gen_helmholtz(int32_t N, double sigma, ildl_csr *K, ildl_gen_info *info, char *msg,
                       size_t msglen);

/* Default shift: the midpoint of the gap in the spectrum of T at (or just above) half of its
 * largest eigenvalue, so K is nonsingular with about half its eigenvalues negative. */
double ildl_gen_helmholtz_default_sigma(int32_t N);

/* Inertia of T - sigma I by counting eigenvalue triples (O(N^2 log N)). */
void ildl_gen_helmholtz_inertia(int32_t N, double sigma, int64_t inertia[3]);

#endif
