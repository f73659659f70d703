/* block_internal.h -- what the files of the cosine-similarity blocking share: the limits, the
 * argument checks, and BR's coarse graphs and groupings. block.c: RB and the checks;
 * block_coarsen.c: a graph coarsened by a grouping; block_group.c: one level of grouping by
 * similarity; block_br.c: BR's levels and its coarse graph; block_br_order.c: the coarse graph
 * ordered and expanded into the blocking. Not part of block.h's interface. */
#ifndef ILDL_ANALYSE_BLOCK_INTERNAL_H
#define ILDL_ANALYSE_BLOCK_INTERNAL_H
#include <stdint.h>
#include "analyse/block.h"
#include "core/dense_rules.h" /* ILDL_TILE: rows of a block at most */


/* ILDL_SUCCESS if the common arguments are usable, else ILDL_ERR_INVALID_OPTION. */
int ildl_block_check(const ildl_csr *A, int max_bs, double threshold);
/* 1 if pair is NULL or a valid involution: pair[i] = -1 or pair[pair[i]] = i != pair[i]. */
int ildl_block_pair_valid(int32_t n, const int32_t *pair);
/* 1 if order[0..n-1] is a permutation of 0..n-1 (mark: [n] workspace, overwritten). */
int ildl_block_order_valid(int32_t n, const int32_t *order, int32_t *mark);

/* A symmetric pattern with self loops and sorted rows; vertex v stands for w[v] rows. */
typedef struct bgraph {
    int32_t n;
    int64_t *p;  /* [n+1] */
    int32_t *i;  /* [p[n]] */
    int32_t *w;  /* [n] */
} bgraph;
void ildl_bgraph_free(bgraph *G);

/* Vertices grouped: group g has the members memb[head[g]..head[g+1]) (any order), ng groups. */
typedef struct {
    int32_t ng;
    int64_t *head; /* [ng+1] */
    int32_t *memb; /* [head[ng]] */
} groups;
void ildl_groups_free(groups *M);
/* Room for ng groups over nv vertices. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_groups_alloc(int32_t ng, int32_t nv, groups *M);

/* C = the symmetric pattern (n, p, ci) with weights w (NULL: unit) coarsened by map[v] in
 * 0..M->ng-1, whose groups M lists (block_coarsen.c). ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_bgraph_coarsen(int32_t n, const int64_t *p, const int32_t *ci, const int32_t *w,
                        const int32_t *map, const groups *M, bgraph *C);

/* One level of the greedy grouping of G by similarity >= t into groups of summed weight <= cap
 * (block_group.c, br_group): the group of v into map[v], the groups into M (allocated here),
 * the best similarity below t into *below. The same result on any number of threads; coarse:
 * G is a coarsened graph (where the parallel version pays). */
int ildl_br_group_any(const bgraph *G, double t, int cap, int64_t dense_lim, int32_t *map,
                      groups *M, double *below, int coarse);

#endif
