/* stats.c -- `ildl stats`: the blocking study of the paper's Fig. 1 / Table II. For levels of
 * fill 0..L and every strategy (RB, BR) x ordering (AMD, RCM, GMC, METIS, and GMC_FILL, the
 * colouring that keeps its levels after the fill, made anew for each level) it prints the number of
 * nonzero blocks, of level sets, the mean block size and the fill, and writes the same as an
 * SVG plot plus an SVG picture of the block pattern (default settings, l_f = 1). */
#define _POSIX_C_SOURCE 200809L
#include "tools/stats.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/block.h"
#include "analyse/fill.h"
#include "analyse/levels.h"
#include "analyse/order.h"
#include "blockildl.h"

typedef struct stat_row {
    int strategy, ordering, lf;
    int32_t nb, levels;
    int64_t tiles;
    double mean_bs, fill;
} stat_row;

static const char *strategy_name(int s) { return s == ILDL_BLOCKING_BR ? "BR" : "RB"; }
/* The orderings of the study, in the order of its rows and plot colours. */
static const int study_orderings[] = {ILDL_ORDER_AMD, ILDL_ORDER_RCM, ILDL_ORDER_GMC, ILDL_ORDER_METIS,
                                      ILDL_ORDER_GMC_FILL};
#define NSTUDY ((int)(sizeof study_orderings / sizeof study_orderings[0]))

static const char *ordering_name(int o)
{
    static const char *names[] = {"AMD", "RCM", "GMC", "METIS", "natural", "auto", "GMCF"};
    return (o >= 0 && o <= 6) ? names[o] : "?";
}

/* Blocking of A for one strategy/ordering (threshold/max_bs as given; lf: the level of fill
 * the ordering is for, which only GMC_FILL uses). */
static int make_blocking(const ildl_csr *A, int strategy, int ordering, int lf, int max_bs, double thr,
                         ildl_blocking *blk)
{
    if (strategy == ILDL_BLOCKING_BR)
        return ildl_block_br(A, ordering, lf, NULL, max_bs, thr, 0.9, blk);
    int32_t *order = malloc(sizeof(int32_t) * (size_t)A->n);
    if (!order) return ILDL_ERR_OUT_OF_MEMORY;
    int st = ildl_order_graph(A->n, A->rowptr, A->col, ordering, lf, order, NULL, NULL, 0);
    if (!st) st = ildl_block_rb(A, order, NULL, max_bs, thr, blk);
    free(order);
    return st;
}

/* Dense-equivalent entries of the block pattern over nnz of the upper triangle of A. */
static double block_fill(const ildl_coarse *C, const int32_t *bstart, int64_t nnz_upper)
{
    double e = 0;
    for (int32_t i = 0; i < C->nb; i++)
        for (int64_t t = C->row_ptr[i]; t < C->row_ptr[i + 1]; t++) {
            double mi = bstart[i + 1] - bstart[i], mj = bstart[C->col[t] + 1] - bstart[C->col[t]];
            e += (C->col[t] == i) ? mi * (mi + 1) / 2 : mi * mj;
        }
    return e / (double)nnz_upper;
}

/* SVG line plot: tiles (solid) and levels (dashed) against l_f, one colour per ordering. */
static void write_plot(const char *path, const stat_row *rows, int nrows, int maxlf, const char *title)
{
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "ildl stats: cannot write %s\n", path); return; }
    const char *colour[NSTUDY] = {"#d62728", "#2ca02c", "#1f77b4", "#9467bd", "#ff7f0e"};
    double ymax = 1;
    for (int k = 0; k < nrows; k++) {
        if (rows[k].tiles > ymax) ymax = (double)rows[k].tiles;
        if (rows[k].levels > ymax) ymax = rows[k].levels;
    }
    int W = 900, H = 380, pw = 380, ph = 280;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='11'>\n", W, H);
    fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n<text x='10' y='16' font-size='13'>%s</text>\n", title);
    for (int s = 0; s < 2; s++) {
        int x0 = 60 + s * (pw + 70), y0 = 40;
        fprintf(f, "<text x='%d' y='%d'>strategy %s (solid: nonzero blocks, dashed: level sets; log scale)</text>\n", x0, y0 - 6, strategy_name(s));
        fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='black'/>\n", x0, y0, pw, ph);
        for (int lf = 0; lf <= maxlf; lf++)
            fprintf(f, "<text x='%d' y='%d'>%d</text>\n", x0 + lf * pw / (maxlf > 0 ? maxlf : 1) - 3, y0 + ph + 14, lf);
        fprintf(f, "<text x='%d' y='%d'>level of fill</text>\n", x0 + pw / 2 - 30, y0 + ph + 28);
        for (double t = 1; t <= ymax; t *= 10) {
            double ty = y0 + ph - ph * __builtin_log(t) / __builtin_log(ymax > 1 ? ymax : 2);
            fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ccc'/><text x='%d' y='%.1f' text-anchor='end'>%g</text>\n",
                    x0, x0 + pw, ty, ty, x0 - 4, ty + 4, t);
        }
        for (int oi = 0; oi < NSTUDY; oi++)
            for (int which = 0; which < 2; which++) {
                fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2'%s points='", colour[oi],
                        which ? " stroke-dasharray='5,4'" : "");
                for (int k = 0; k < nrows; k++) {
                    if (rows[k].strategy != s || rows[k].ordering != study_orderings[oi]) continue;
                    double v = which ? rows[k].levels : (double)rows[k].tiles;
                    double lx = x0 + (double)rows[k].lf * pw / (maxlf > 0 ? maxlf : 1);
                    double ly = y0 + ph - ph * (v > 1 ? __builtin_log(v) : 0) / __builtin_log(ymax > 1 ? ymax : 2);
                    fprintf(f, "%.1f,%.1f ", lx, ly);
                }
                fprintf(f, "'/>\n");
            }
    }
    for (int oi = 0; oi < NSTUDY; oi++)
        fprintf(f, "<text x='%d' y='%d' fill='%s'>%s</text>\n", 60 + oi * 80, H - 8, colour[oi],
                ordering_name(study_orderings[oi]));
    fprintf(f, "</svg>\n");
    fclose(f);
}

/* SVG picture of the block pattern: the nb x nb block matrix downsampled to at most 300 x 300
 * cells, darker for more (and fill-in) blocks. */
static void write_pattern(const char *path, const ildl_coarse *C, const char *title)
{
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "ildl stats: cannot write %s\n", path); return; }
    int g = C->nb < 300 ? C->nb : 300, px = 600 / (g > 0 ? g : 1);
    if (px < 2) px = 2;
    int *cnt = calloc((size_t)g * g, sizeof(int)), *fillc = calloc((size_t)g * g, sizeof(int));
    if (!cnt || !fillc) { free(cnt); free(fillc); fclose(f); return; }
    for (int32_t i = 0; i < C->nb; i++)
        for (int64_t t = C->row_ptr[i]; t < C->row_ptr[i + 1]; t++) {
            int a = (int)((int64_t)i * g / C->nb), b = (int)((int64_t)C->col[t] * g / C->nb);
            cnt[a * g + b]++;
            cnt[b * g + a]++;
            if (C->lvl[t] > 0) { fillc[a * g + b]++; fillc[b * g + a]++; }
        }
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='12'>\n", g * px + 20, g * px + 40);
    fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n<text x='10' y='16'>%s (red: fill-in blocks)</text>\n", title);
    for (int a = 0; a < g; a++)
        for (int b = 0; b < g; b++) {
            if (!cnt[a * g + b]) continue;
            const char *col = fillc[a * g + b] * 2 > cnt[a * g + b] ? "#c0392b" : "#1f3b73";
            fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s'/>\n", 10 + b * px, 24 + a * px, px, px, col);
        }
    fprintf(f, "</svg>\n");
    free(cnt);
    free(fillc);
    fclose(f);
}

int ildl_stats_run(const ildl_csr *A, const char *name, int maxlf, int max_bs, double thr,
                   const char *prefix)
{
    int nrows = 0, st = ILDL_SUCCESS;
    stat_row *rows = calloc((size_t)2 * NSTUDY * (maxlf + 1), sizeof(stat_row));
    if (!rows) return ILDL_ERR_OUT_OF_MEMORY;
    int64_t nnz_upper = (A->rowptr[A->n] + A->n) / 2;
    printf("%-8s %-6s %3s %8s %8s %9s %8s\n", "strategy", "order", "lf", "blocks", "levels", "mean bs", "fill");
    for (int s = ILDL_BLOCKING_RB; s <= ILDL_BLOCKING_BR; s++)
        for (int oi = 0; oi < NSTUDY; oi++) {
            int o = study_orderings[oi], per_lf = o == ILDL_ORDER_GMC_FILL; /* its order depends on l_f */
            ildl_blocking blk;
            ildl_csr Ap;
            memset(&blk, 0, sizeof blk);
            memset(&Ap, 0, sizeof Ap);
            for (int lf = 0; lf <= maxlf && !st; lf++) {
                if (lf == 0 || per_lf) {
                    ildl_csr_free(&Ap);
                    ildl_blocking_free(&blk);
                    int bst = make_blocking(A, s, o, per_lf ? lf : 1, max_bs, thr, &blk);
                    if (bst == ILDL_ERR_NOT_SUPPORTED && per_lf) { /* its searches' budget: from here on, none */
                        fprintf(stderr, "ildl stats: %s/%s at l_f %d: not supported (the colouring's "
                                "neighbourhoods are too large)\n", strategy_name(s), ordering_name(o), lf);
                        break;
                    }
                    if (bst) {
                        fprintf(stderr, "ildl stats: blocking %s/%s failed (%d)\n", strategy_name(s), ordering_name(o), bst);
                        st = bst;
                        break;
                    }
                    st = ildl_csr_permute(A, blk.perm, &Ap);
                    if (st) break;
                }
                ildl_coarse C;
                ildl_levels L;
                memset(&C, 0, sizeof C);
                memset(&L, 0, sizeof L);
                st = ildl_coarse_build(&Ap, blk.nb, blk.bstart, lf, &C);
                if (!st) st = ildl_levels_compute(&C, &L);
                if (!st) {
                    stat_row *r = &rows[nrows++];
                    r->strategy = s; r->ordering = o; r->lf = lf;
                    r->nb = blk.nb; r->levels = L.nlevels; r->tiles = C.nblocks;
                    r->mean_bs = (double)A->n / blk.nb;
                    r->fill = block_fill(&C, blk.bstart, nnz_upper);
                    printf("%-8s %-6s %3d %8lld %8d %9.2f %8.2f\n", strategy_name(s), ordering_name(o), lf,
                           (long long)r->tiles, (int)r->levels, r->mean_bs, r->fill);
                    if (prefix && s == ILDL_BLOCKING_RB && o == ILDL_ORDER_AMD && lf == (maxlf < 1 ? maxlf : 1)) {
                        char path[4096], title[512];
                        snprintf(path, sizeof path, "%s-pattern.svg", prefix);
                        snprintf(title, sizeof title, "%s: block pattern, RB + AMD, l_f = %d, %d blocks", name, lf, (int)blk.nb);
                        write_pattern(path, &C, title);
                    }
                }
                ildl_coarse_free(&C);
                ildl_levels_free(&L);
            }
            ildl_csr_free(&Ap);
            ildl_blocking_free(&blk);
            if (st) break;
        }
    if (prefix) {
        char path[4096], title[512];
        snprintf(path, sizeof path, "%s-levels.svg", prefix);
        snprintf(title, sizeof title, "%s: nonzero blocks and level sets vs level of fill", name);
        write_plot(path, rows, nrows, maxlf, title);
        printf("wrote %s-levels.svg and %s-pattern.svg\n", prefix, prefix);
    }
    free(rows);
    return st;
}
