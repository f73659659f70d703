/* block_sn.c -- supernodal blocking: the diagonal blocks of a complete factor cut where the
 * scalar factor's structure changes. The rows of the given order are grouped into units (a
 * row, or an adjacent 2x2 pair, never split), the units' elimination tree is postordered, and
 * the row counts of L's columns (in rows of A) found from the row subtrees. A block is a chain
 * of units, each the parent of the one before it, up to max_bs rows, joined while a unit's
 * column of L is at least `keep` of its parent's (the zeros a dense tile of the two then
 * stores). Blocks of 32 consecutive rows of an order (RB) put unrelated subtrees into one
 * block, whose block fill joins all their structures; these blocks follow the tree instead.
 * Where the chains are short (KKT systems: 1-4 rows), they are then merged along the tree up to
 * max_bs rows (sn_amalgamate): fewer block rows and levels for explicit zeros. */

#include "analyse/block.h"
#include "blockildl.h"

#include <stdlib.h>
#include <string.h>
#include "analyse/block_internal.h"
#include "core/util.h"

/* A unit joins the block of its child when the child's column count is at least this share of
 * the unit's (rows of the unit plus its column count). */
#define SN_KEEP 0.5
/* Amalgamation only where the chains average fewer rows than this: there the GPU's cost per
 * block row dominates (sqd_liswet1: 2.0 rows, factor 3.3 -> 1.5 ms on an H200); on longer
 * chains it gained 9-15% and moved the perturbed pivots of the singular stokes64 (8.1 rows) so
 * that SQMR no longer solved with its complete factor of 2A (perf-notes §86) */
#define SN_AMALGAMATE_MEAN 6

typedef struct {
    int32_t nu;
    int32_t *ustart; /* [nu+1] positions in order of unit u's rows */
    int32_t *urow;   /* [n] unit of original row r */
    int32_t *parent; /* [nu] elimination tree of the units, -1 at a root */
} sn_units;

/* Units of order (pairs adjacent in it), then the elimination tree of A's quotient graph on
 * them (Liu's algorithm with path compression; anc: [nu] workspace). */
static void sn_tree(const ildl_csr *A, const int32_t *order, const int32_t *pair, sn_units *U, int32_t *anc)
{
    int32_t n = A->n, nu = 0;
    for (int32_t k = 0; k < n; nu++) {
        int w = (pair && k + 1 < n && pair[order[k]] == order[k + 1]) ? 2 : 1;
        U->ustart[nu] = k;
        for (int t = 0; t < w; t++) U->urow[order[k + t]] = nu;
        k += w;
    }
    U->ustart[nu] = n;
    U->nu = nu;
    for (int32_t u = 0; u < nu; u++) {
        U->parent[u] = -1;
        anc[u] = -1;
        for (int32_t k = U->ustart[u]; k < U->ustart[u + 1]; k++) {
            int32_t r = order[k];
            for (int64_t p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
                int32_t v = U->urow[A->col[p]];
                while (v < u && anc[v] != -1 && anc[v] != u) {
                    int32_t next = anc[v];
                    anc[v] = u;
                    v = next;
                }
                if (v < u && anc[v] == -1) {
                    anc[v] = u;
                    U->parent[v] = u;
                }
            }
        }
    }
}

/* Postorder of the tree (children in increasing order, roots in increasing order):
 * post[k] = the unit visited k-th. head, next, stack: [nu] workspace. */
static void sn_postorder(const int32_t *parent, int32_t nu, int32_t *head, int32_t *next, int32_t *stack,
                         int32_t *post)
{
    for (int32_t u = 0; u < nu; u++) head[u] = -1;
    for (int32_t u = nu - 1; u >= 0; u--) /* backwards, so each list is increasing */
        if (parent[u] >= 0) {
            next[u] = head[parent[u]];
            head[parent[u]] = u;
        }
    int32_t k = 0;
    for (int32_t root = 0; root < nu; root++) {
        if (parent[root] >= 0) continue;
        int32_t top = 0;
        stack[top++] = root;
        while (top > 0) {
            int32_t u = stack[top - 1], c = head[u];
            if (c < 0) {
                post[k++] = u;
                top--;
            } else {
                head[u] = next[c]; /* the list is consumed as the walk goes */
                stack[top++] = c;
            }
        }
    }
}

/* Amalgamation, for kernels whose cost is per block row more than per entry (the GPU's): the
 * blocks (bu[0..nb], first units in postorder; bu[nb] = nu) merged from the last to the
 * first. The block A just before the current group G joins it when the rows fit in max_bs and
 * A's top unit hangs below G (its parent in G) or beside it (its parent that of G's top unit);
 * the merged columns then share the structure below the group's top or its parent's, and
 * their explicit zeros are stored. Returns the new count of blocks (bu rewritten in place). */
static int32_t sn_amalgamate(const sn_units *U, const int32_t *post, const int32_t *par, int max_bs, int32_t nb,
                             int32_t *bu)
{
    int32_t out = 0; /* groups written to bu[nb - out .. nb - 1] going down, moved up at the end */
    int32_t gf = 0, gt = 0, grows = 0;
    for (int32_t b = nb - 1; b >= 0; b--) {
        int32_t f = bu[b], t = bu[b + 1] - 1;
        int32_t rows = 0;
        for (int32_t x = f; x <= t; x++) rows += U->ustart[post[x] + 1] - U->ustart[post[x]];
        int join = b < nb - 1 && rows + grows <= max_bs &&
                   ((par[t] >= gf && par[t] <= gt) || (par[t] >= 0 && par[t] == par[gt]));
        if (join) {
            gf = f;
            grows += rows;
        } else {
            if (b < nb - 1) bu[nb - 1 - out++] = gf; /* the finished group */
            gf = f;
            gt = t;
            grows = rows;
        }
    }
    bu[nb - 1 - out++] = gf;
    int32_t nu = bu[nb];
    memmove(bu, bu + nb - out, sizeof(int32_t) * (size_t)out);
    bu[out] = nu;
    return out;
}

int ildl_block_sn(const ildl_csr *A, const int32_t *order, const int32_t *pair, int max_bs, int amalgamate,
                  int64_t max_work, int *over, ildl_blocking *out)
{
    if (over) *over = 0;
    if (out) memset(out, 0, sizeof *out);
    if (!out) return ILDL_ERR_INVALID_OPTION;
    int st = ildl_block_check(A, max_bs, 0.0);
    if (st) return st;
    int32_t n = A->n;
    if (!order || !ildl_block_pair_valid(n, pair)) return ILDL_ERR_INVALID_OPTION;
    if (max_bs < 2) pair = NULL; /* as RB: a 1-row block cannot hold a pair */
    sn_units U = {0};
    int32_t *w1 = NULL, *w2 = NULL, *w3 = NULL, *post = NULL, *pos = NULL, *par = NULL;
    int64_t *cc = NULL;
    int32_t *bstart = NULL;
    U.ustart = ildl_malloc(sizeof(int32_t) * ((size_t)n + 1));
    U.urow = ildl_malloc(sizeof(int32_t) * (size_t)n);
    U.parent = ildl_malloc(sizeof(int32_t) * (size_t)n);
    w1 = ildl_malloc(sizeof(int32_t) * (size_t)n);
    w2 = ildl_malloc(sizeof(int32_t) * ((size_t)n + 1));
    w3 = ildl_malloc(sizeof(int32_t) * (size_t)n);
    post = ildl_malloc(sizeof(int32_t) * (size_t)n);
    pos = ildl_malloc(sizeof(int32_t) * (size_t)n);
    par = ildl_malloc(sizeof(int32_t) * (size_t)n);
    cc = ildl_malloc(sizeof(int64_t) * (size_t)n);
    bstart = ildl_malloc(sizeof(int32_t) * ((size_t)n + 1));
    out->perm = ildl_malloc(sizeof(int32_t) * (size_t)n);
    st = ILDL_ERR_OUT_OF_MEMORY;
    if (!U.ustart || !U.urow || !U.parent || !w1 || !w2 || !w3 || !post || !pos || !par || !cc ||
        !bstart || !out->perm)
        goto cleanup;
    st = ILDL_ERR_INVALID_OPTION;
    if (!ildl_block_order_valid(n, order, w1)) goto cleanup;

    sn_tree(A, order, pair, &U, w1);
    int32_t nu = U.nu;
    sn_postorder(U.parent, nu, w1, w2, w3, post);
    for (int32_t k = 0; k < nu; k++) pos[post[k]] = k;
    for (int32_t k = 0; k < nu; k++) {
        int32_t p = U.parent[post[k]];
        par[k] = p < 0 ? -1 : pos[p];
        cc[k] = 0;
    }
    /* cc[x]: rows of A below unit x in its column of L; unit v's row of L is the union of the
     * tree paths from its neighbours below it up to v (its row subtree), walked once each
     * (mark: w1) */
    int32_t *mark = w1;
    for (int32_t k = 0; k < nu; k++) mark[k] = -1;
    int64_t work = 0;
    for (int32_t v = 0; v < nu; v++) {
        int32_t u = post[v], wv = U.ustart[u + 1] - U.ustart[u];
        mark[v] = v;
        for (int32_t q = U.ustart[u]; q < U.ustart[u + 1]; q++) {
            int32_t r = order[q];
            for (int64_t p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
                for (int32_t x = pos[U.urow[A->col[p]]]; x < v && mark[x] != v; x = par[x]) {
                    mark[x] = v;
                    cc[x] += wv;
                    work++;
                }
            }
        }
        if (max_work > 0 && work > max_work) {
            if (over) *over = 1;
            st = ILDL_ERR_OUT_OF_MEMORY;
            goto cleanup;
        }
    }
    /* blocks: chains x-1 -> x (x the parent of x-1) while the rows fit and x-1's column keeps
     * at least SN_KEEP of x's; bu[b]: the first unit (postorder position) of block b */
    int32_t *bu = w2, nb = 0, size = 0;
    for (int32_t x = 0; x < nu; x++) {
        int32_t u = post[x], wx = U.ustart[u + 1] - U.ustart[u];
        int join = x > 0 && size + wx <= max_bs && par[x - 1] == x &&
                   (double)cc[x - 1] >= SN_KEEP * (double)(cc[x] + wx);
        if (!join) {
            bu[nb++] = x;
            size = 0;
        }
        size += wx;
    }
    bu[nb] = nu;
    if (amalgamate && (double)n < SN_AMALGAMATE_MEAN * (double)nb) nb = sn_amalgamate(&U, post, par, max_bs, nb, bu);
    int32_t q = 0;
    for (int32_t b = 0; b < nb; b++) {
        bstart[b] = q;
        for (int32_t x = bu[b]; x < bu[b + 1]; x++) {
            int32_t u = post[x];
            for (int32_t k = U.ustart[u]; k < U.ustart[u + 1]; k++) out->perm[q++] = order[k];
        }
    }
    bstart[nb] = n;
    out->n = n;
    out->nb = nb;
    int32_t *shrunk = realloc(bstart, sizeof(int32_t) * ((size_t)nb + 1));
    out->bstart = shrunk ? shrunk : bstart;
    bstart = NULL;
    st = ILDL_SUCCESS;

cleanup:
    free(U.ustart); free(U.urow); free(U.parent);
    free(w1); free(w2); free(w3); free(post); free(pos); free(par); free(cc);
    free(bstart);
    if (st) ildl_blocking_free(out);
    return st;
}
