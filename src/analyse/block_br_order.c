/* block_br_order.c -- the end of strategy BR: the coarse graph's vertices ordered (any
 * ildl_ordering; AUTO's colouring analysed beside AMD) and expanded into the blocking, each
 * vertex one block of contiguous rows; and ildl_block_br, the whole of BR. */

#include <stdlib.h>
#include <string.h>
#include "analyse/block.h"
#include "analyse/order.h"
#include "blockildl.h"
#include "core/util.h"

/* Expand the ordered vertices of the final graph (nc vertices, weights w = rows, rows as
 * br_vertex_rows in block_br.c lists them) into the blocking: perm lists the rows of vertex
 * operm[0], then operm[1], ...; block k is vertex operm[k]. Each block's rows are copied in
 * parallel. */
static int br_expand(int32_t n, int32_t nc, const int32_t *w, const int32_t *operm,
                     const int32_t *voff, const int32_t *rows, ildl_blocking *out)
{
    out->perm = ildl_malloc(sizeof(int32_t) * (size_t)n);
    out->bstart = ildl_malloc(sizeof(int32_t) * ((size_t)nc + 1));
    if (!out->perm || !out->bstart) return ILDL_ERR_OUT_OF_MEMORY;
    out->bstart[0] = 0;
    for (int32_t k = 0; k < nc; k++) out->bstart[k + 1] = out->bstart[k] + w[operm[k]];
#pragma omp parallel for schedule(static)
    for (int32_t k = 0; k < nc; k++)
        memcpy(out->perm + out->bstart[k], rows + voff[operm[k]],
               sizeof(int32_t) * (size_t)w[operm[k]]);
    out->n = n;
    out->nb = nc;
    return ILDL_SUCCESS;
}

/* The blocking of an order of the coarse graph's vertices (block.h). */
int ildl_block_br_expand(const ildl_br_graph *g, const int32_t *operm, int used, ildl_blocking *out)
{
    memset(out, 0, sizeof *out);
    int st = br_expand(g->n, g->nv, g->w, operm, g->voff, g->rows, out);
    if (st) ildl_blocking_free(out);
    else out->ordering_used = used;
    return st;
}

/* Order the coarse graph and expand it (block.h). */
int ildl_block_br_order(const ildl_br_graph *g, int ordering, int fill_level, ildl_blocking *out,
                        char *msg, size_t msglen)
{
    int used = ordering, st;
    memset(out, 0, sizeof *out);
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    int32_t *operm = ildl_malloc(sizeof(int32_t) * ((size_t)g->nv > 0 ? (size_t)g->nv : 1));
    if (!operm) return ILDL_ERR_OUT_OF_MEMORY;
    /* BR orders the block graph, so AUTO may colour it (ildl_order_auto_colour): the colouring
     * is a task beside AMD (sequential library code), taken by another thread */
    ildl_colouring pre = {0};
    int colour = ordering == ILDL_ORDER_AUTO && ildl_order_auto_colour_wanted(g->nv, fill_level);
    if (colour) {
        pre.perm = ildl_malloc(sizeof(int32_t) * (size_t)g->nv);
        colour = pre.perm != NULL; /* else the rule computes it itself, or gives up */
    }
#pragma omp parallel if (colour)
#pragma omp single
    {
        if (colour) {
#pragma omp task shared(pre)
            pre.status = ildl_order_gmc_fill(g->nv, g->p, g->i, fill_level + 1, pre.perm, &pre.ncolours,
                                             &pre.nhubs);
        }
        st = ildl_order_graph(g->nv, g->p, g->i, ordering, fill_level, operm, &used, msg, msglen);
#pragma omp taskwait
        if (!st && ordering == ILDL_ORDER_AUTO)
            st = ildl_order_auto_colour(g->nv, g->p, g->i, fill_level, colour ? &pre : NULL, operm, &used);
    }
    free(pre.perm);
    ildl_profile_lap(&tp, "BR order (n %d, nnz %lld)", (int)g->nv, (long long)g->p[g->nv]);
    if (!st) st = ildl_block_br_expand(g, operm, used, out);
    ildl_profile_lap(&tp, "BR expand");
    free(operm);
    return st;
}

/* Strategy BR (block.h): the coarse graph, ordered and expanded. */
int ildl_block_br(const ildl_csr *A, int ordering, int fill_level, const int32_t *pair, int max_bs,
                  double threshold, double decay, ildl_blocking *out)
{
    ildl_br_graph g;
    char msg[256];
    if (!out) return ILDL_ERR_INVALID_OPTION;
    memset(out, 0, sizeof *out);
    int st = ildl_block_br_graph(A, pair, max_bs, threshold, decay, &g);
    if (!st) st = ildl_block_br_order(&g, ordering, fill_level, out, msg, sizeof msg);
    ildl_br_graph_free(&g);
    return st;
}
