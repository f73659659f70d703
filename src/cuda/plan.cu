/* plan.cu -- how a context lays out the work on the host before any kernel runs: the
 * factorization's chunks (consecutive rows of a level whose tiles fit the in-flight budget)
 * and the sync-free solves' work items in ticket order, with long rows split. */
#include <stdio.h>
#include <stdlib.h>
#include "cuda/context.cuh"
extern "C" {
#include "analyse/tickets.h"
}

/* Chunks of consecutive rows of a level whose tiles fit the in-flight budget (the same rule
 * as the CPU reference; chunking changes neither grants nor offsets). */
int plan_chunks(ildl_cuda_ctx *c, const ildl_tiles *T, int32_t *rowbase, int32_t *tile_rr, int32_t *tile_s)
{
    int64_t longest = 1, ntl_all = 0;
    for (int32_t i = 0; i < T->nb; i++) {
        int64_t len = T->row_ptr[i + 1] - T->row_ptr[i];
        if (len > longest) longest = len;
    }
    int64_t budget = T->ntiles < 16384 ? T->ntiles : 16384;
    if (budget < longest) budget = longest;
    c->fac.budget = budget;
    c->fac.chunk_r0 = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nb + 1));
    c->fac.chunk_n = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nb + 1));
    c->fac.chunk_last = (int8_t *)malloc((size_t)T->nb + 1);
    c->fac.chunk_toff = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 2));
    c->fac.chunk_slots = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 1));
    if (!c->fac.chunk_r0 || !c->fac.chunk_n || !c->fac.chunk_last || !c->fac.chunk_toff || !c->fac.chunk_slots)
        return ILDL_ERR_OUT_OF_MEMORY;
    c->fac.nchunks = 0;
    for (int32_t lev = 0; lev < T->nlevels; lev++) {
        int32_t r0 = T->level_ptr[lev], rend = T->level_ptr[lev + 1];
        while (r0 < rend) {
            int32_t nrows = 0;
            int64_t ntl = 0;
            c->fac.chunk_toff[c->fac.nchunks] = ntl_all;
            while (r0 + nrows < rend) {
                int32_t i = T->level_rows[r0 + nrows];
                int64_t len = T->row_ptr[i + 1] - T->row_ptr[i];
                if (nrows > 0 && ntl + len > budget) break;
                rowbase[r0 + nrows] = (int32_t)ntl;
                for (int64_t s = 1; s < len; s++) {
                    tile_rr[ntl_all] = nrows;
                    tile_s[ntl_all] = (int32_t)s;
                    ntl_all++;
                }
                nrows++;
                ntl += len;
            }
            c->fac.chunk_r0[c->fac.nchunks] = r0;
            c->fac.chunk_n[c->fac.nchunks] = nrows;
            c->fac.chunk_slots[c->fac.nchunks] = ntl;
            c->fac.chunk_last[c->fac.nchunks] = (r0 + nrows == rend);
            c->fac.nchunks++;
            r0 += nrows;
        }
    }
    c->fac.chunk_toff[c->fac.nchunks] = ntl_all;
    /* phase B pairs a chunk's slots (rows in level order, each row's tiles in order) with the
     * storage order through tile_order and d_slot_size: the two must be the same sequence */
    int64_t g = 0;
    for (int32_t r = 0; r < T->nb; r++) {
        int32_t i = T->level_rows[r];
        for (int64_t t = T->row_ptr[i]; t < T->row_ptr[i + 1]; t++, g++)
            if (T->tile_order[g] != t) {
                ildl_cuda_set_message("storage order differs from the chunks' slot order at %lld",
                         (long long)g);
                return ILDL_ERR_INTERNAL;
            }
    }
    return ILDL_SUCCESS;
}

/* Rows with more than ILDL_SF_SPLIT tiles are split into work items of at most
 * ILDL_SF_CHUNK tiles in the sync-free solves (the tuning's sf_split = N: rows with more than N
 * tiles in both sweeps, chunks of min(N, ILDL_SF_CHUNK)). A row's tiles are otherwise summed by one
 * block one after the other: a KKT matrix's dense row makes a block row with a thousand tiles,
 * and its sweep waits for that block alone. Splitting costs the row a pass through global
 * memory (the items' partial sums, summed in tile order by the last of them to finish), so
 * only long rows pay for it (at 32 tiles the 1M Stokes sweeps were 1.5-2.6x slower).
 * Forward, the threshold comes down to ILDL_SF_SPLIT_MIN tiles while at most
 * ILDL_SF_FEW_PER_SM rows per SM are longer than it (ildl_sweep_split_threshold): the last
 * levels' few longest rows otherwise finish the sweep one warp each while the rest of the
 * machine idles; where many rows are long the machine is busy with them anyway, and the items
 * only cost. With the forward split row's last item going on from the others' running sum
 * (row_chunk), helmholtz101 (121 rows of 65-94 tiles split) gained 1.5% per iteration, stokes64
 * (128 rows of 100-133) and control70 (none) stayed within 0.3%. */
#define ILDL_SF_SPLIT 128
#define ILDL_SF_CHUNK 32
#define ILDL_SF_SPLIT_MIN 64
#define ILDL_SF_FEW_PER_SM 1

/* The sync-free solves' work items in ticket order, per direction (dev_tiles.sf_*): one per
 * row, or one per chunk of sf_chunk tiles of a row with more; the split rows' scratch for the
 * tiles' partial sums (one direction at a time) and their item counters. col_diag: host copy. */
cudaError_t sf_split_plan(ildl_cuda_ctx *c, const ildl_tiles *T, const int64_t *col_diag)
{
    dev_tiles &D = c->T;
    const int set = c->tune.sf_split > 0; /* one threshold for both sweeps */
    int split = set ? c->tune.sf_split : ILDL_SF_SPLIT;
    int split_f = set ? split /* forward: else lowered while the rows above it are few */
                      : ildl_sweep_split_threshold(T, ILDL_SWEEP_FORWARD, (int64_t)ILDL_SF_FEW_PER_SM * c->sm_count,
                                                   ILDL_SF_SPLIT_MIN, split);
    int chunk = split_f < ILDL_SF_CHUNK ? split_f : ILDL_SF_CHUNK; /* split_f <= split */
    int chain = c->tune.sf_chain_order != 0; /* ildl_sweep_ticket_orders: chains, or level order */
    int32_t nb = T->nb;
    int64_t cap = 2 * ((int64_t)nb + T->ntiles / chunk + 2), tot[2] = {0, 0}; /* both directions */
    int2 *items = (int2 *)malloc(sizeof(int2) * (size_t)cap);
    int64_t *scr = (int64_t *)malloc(sizeof(int64_t) * 2 * ((size_t)nb + 1));
    int32_t *seq = (int32_t *)malloc(sizeof(int32_t) * 2 * ((size_t)nb + 1)); /* forward, backward */
    int32_t nitems[2] = {0, 0}, nsplit[2] = {0, 0};
    int64_t longest[2] = {0, 0};
    cudaError_t e = cudaSuccess;
    if (!items || !scr || !seq || ildl_sweep_ticket_orders(T, chain, seq, seq + nb + 1) != ILDL_SUCCESS) {
        e = cudaErrorMemoryAllocation;
        goto done;
    }
    for (int dir = 0; dir < 2; dir++) {
        int2 *it = items + (dir ? nitems[0] : 0);
        int64_t *so = scr + (size_t)dir * (nb + 1);
        const int32_t *order = seq + (size_t)dir * (nb + 1);
        int32_t k = 0;
        for (int32_t t = 0; t < nb; t++) {
            int32_t pos = order[t], i = T->level_rows[pos];
            int64_t ntile = dir ? T->row_ptr[i + 1] - T->row_ptr[i] - 1 : col_diag[i] - T->col_ptr[i];
            if (ntile > longest[dir]) longest[dir] = ntile;
            if (ntile <= (dir ? split : split_f)) {
                so[i] = -1;
                it[k++] = make_int2(pos, -1);
                continue;
            }
            so[i] = tot[dir];
            tot[dir] += ntile;
            nsplit[dir]++;
            for (int64_t q = 0; q < ntile; q += chunk) it[k++] = make_int2(pos, (int)(q / chunk));
        }
        nitems[dir] = k;
    }
    if (ildl_profiling())
        fprintf(stderr, "ildl profile: cuda: solve rows split: forward %d of > %d tiles (longest %lld), "
                "backward %d of > %d (longest %lld); tickets in %s order\n", (int)nsplit[0], split_f,
                (long long)longest[0], (int)nsplit[1], split, (long long)longest[1], chain ? "chain" : "level");
    D.sf_chunk = chunk;
    D.sf_nitems_f = nitems[0];
    D.sf_nitems_b = nitems[1];
    e = upload((int2 **)&D.sf_items_f, items, (size_t)nitems[0], c);
    if (e == cudaSuccess) e = upload((int2 **)&D.sf_items_b, items + nitems[0], (size_t)nitems[1], c);
    if (e == cudaSuccess) e = alloc(&D.sf_rec_f, (size_t)nitems[0], c); /* filled by solve_meta_launch */
    if (e == cudaSuccess) e = alloc(&D.sf_rec_b, (size_t)nitems[1], c);
    if (e == cudaSuccess) e = upload((int64_t **)&D.sf_scr_f, scr, (size_t)nb, c);
    if (e == cudaSuccess) e = upload((int64_t **)&D.sf_scr_b, scr + nb + 1, (size_t)nb, c);
    c->sol.sf_scratch_len = (tot[0] > tot[1] ? tot[0] : tot[1]) * LD;
    if (e == cudaSuccess) e = alloc(&D.sf_scratch, (size_t)c->sol.sf_scratch_len, c);
    if (e == cudaSuccess) e = alloc_zeroed(&D.sf_count, (size_t)nb, c);
    if (e == cudaSuccess) e = alloc_zeroed(&D.sf_ready, (size_t)nb, c);
done:
    free(items);
    free(scr);
    free(seq);
    return e;
}

/* The factorization's split pulls: in a chunk too narrow to fill the device, a tile's pulls are
 * one chain of updates (about 2 us each, perf-notes §78) and the longest chain is the chunk's
 * time. The updates of the tiles with the longest chains are instead computed apart, one block
 * per update (k_pull_products, factor_phase_a.cu), into a scratch of products that the tile's
 * kernel then subtracts in k order: the same operations per entry, so the same bits. A chunk
 * qualifies when its pull blocks (rows + off-diagonal tiles) are at most
 * ILDL_PULL_SPLIT_WIDTH per SM, a tile when it has at least ILDL_PULL_SPLIT_MIN updates; at most
 * ILDL_PULL_SPLIT_CAP products per chunk (the longest chains first). The tuning's
 * factor_split = N >= 1 splits every tile of N or more updates in every chunk, 0 none. Phase C's
 * column permutations follow the same rule (colperm_plan). */
#define ILDL_PULL_SPLIT_WIDTH 16
#define ILDL_PULL_SPLIT_MIN 2
#define ILDL_PULL_SPLIT_CAP 4096

/* Whether chunk ch gets the per-tile work (split pulls, the off-diagonal solves and phase C's
 * column permutations one block per tile): narrow chunks by the rule, every chunk or none by the
 * tuning (factor_split). */
bool chunk_narrow(const ildl_cuda_ctx *c, int32_t ch)
{
    const cuda_factor_work &F = c->fac;
    if (c->tune.factor_split >= 0) return c->tune.factor_split > 0;
    int64_t blocks = F.chunk_n[ch] + (F.chunk_toff[ch + 1] - F.chunk_toff[ch]);
    return blocks <= (int64_t)ILDL_PULL_SPLIT_WIDTH * c->sm_count;
}

/* One candidate: its place in the split tables (row: level position; else off-diagonal list
 * index), its block row and column (i, j) and its update count. */
struct split_cand {
    int64_t place;
    int32_t i, j, n;
    int row;
};

static int cand_longer(const void *a, const void *b)
{
    const split_cand *x = (const split_cand *)a, *y = (const split_cand *)b;
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    return x->place < y->place ? -1 : x->place > y->place; /* deterministic */
}

/* The updates of tile (i,j), k < i in both block columns, k ascending: (tiles (k,i), (k,j)) into
 * ti, tj when given; returns their count. */
static int32_t common_updates(const ildl_tiles *T, int32_t i, int32_t j, int64_t *ti, int64_t *tj)
{
    int64_t qi = T->col_ptr[i], ei = T->col_ptr[i + 1], qj = T->col_ptr[j], ej = T->col_ptr[j + 1];
    int32_t n = 0;
    while (qi < ei && qj < ej) {
        int64_t a = T->col_tiles[qi], b = T->col_tiles[qj];
        int32_t ki = T->row[a], kj = T->row[b];
        if (ki >= i || kj >= i) break;
        if (ki < kj) qi++;
        else if (kj < ki) qj++;
        else {
            if (ti) {
                ti[n] = a;
                tj[n] = b;
            }
            n++;
            qi++;
            qj++;
        }
    }
    return n;
}

cudaError_t pull_split_plan(ildl_cuda_ctx *c, const ildl_tiles *T, const int32_t *tile_rr, const int32_t *tile_s)
{
    cuda_factor_work &F = c->fac;
    int force = c->tune.factor_split;
    int32_t nb = T->nb, nch = F.nchunks;
    int64_t nofd_all = F.chunk_toff[nch], njobs = 0, jcap = 0, maxjobs = 0;
    int32_t nmin = force > 0 ? force : ILDL_PULL_SPLIT_MIN;
    int2 *srow = (int2 *)malloc(sizeof(int2) * ((size_t)nb + 1));
    int2 *sofd = (int2 *)malloc(sizeof(int2) * ((size_t)nofd_all + 1));
    int64_t *jti = NULL, *jtj = NULL;
    split_cand *cand = NULL;
    int64_t ncand_cap = 0;
    cudaError_t e = cudaSuccess;
    F.chunk_job = (int64_t *)malloc(sizeof(int64_t) * ((size_t)nch + 1));
    if (!srow || !sofd || !F.chunk_job) { e = cudaErrorMemoryAllocation; goto done; }
    for (int32_t r = 0; r < nb; r++) srow[r] = make_int2(0, -1);
    for (int64_t q = 0; q < nofd_all; q++) sofd[q] = make_int2(0, -1);
    for (int32_t ch = 0; ch < nch; ch++) {
        int32_t r0 = F.chunk_r0[ch], nrows = F.chunk_n[ch];
        int64_t toff = F.chunk_toff[ch], nofd = F.chunk_toff[ch + 1] - toff, nc = 0, used = 0;
        F.chunk_job[ch] = njobs;
        if (!chunk_narrow(c, ch)) continue;
        if (nrows + nofd > ncand_cap) {
            free(cand);
            ncand_cap = 2 * (nrows + nofd);
            cand = (split_cand *)malloc(sizeof(split_cand) * (size_t)ncand_cap);
            if (!cand) { e = cudaErrorMemoryAllocation; goto done; }
        }
        for (int32_t rr = 0; rr < nrows; rr++) {
            int32_t i = T->level_rows[r0 + rr];
            int32_t n = (int32_t)(ildl_tiles_col_diag(T, i) - T->col_ptr[i]);
            if (n >= nmin) cand[nc++] = split_cand{r0 + rr, i, i, n, 1};
        }
        for (int64_t q = 0; q < nofd; q++) {
            int32_t i = T->level_rows[r0 + tile_rr[toff + q]];
            int64_t t = T->row_ptr[i] + tile_s[toff + q];
            int32_t n = common_updates(T, i, T->col[t], NULL, NULL);
            if (n >= nmin) cand[nc++] = split_cand{toff + q, i, T->col[t], n, 0};
        }
        qsort(cand, (size_t)nc, sizeof *cand, cand_longer);
        for (int64_t k = 0; k < nc; k++) {
            split_cand &s = cand[k];
            if (used + s.n > ILDL_PULL_SPLIT_CAP) continue;
            if (njobs + s.n > jcap) {
                int64_t ncap = 2 * (njobs + s.n) + 1024;
                int64_t *a = (int64_t *)realloc(jti, sizeof(int64_t) * (size_t)ncap);
                if (a) jti = a;
                int64_t *b = a ? (int64_t *)realloc(jtj, sizeof(int64_t) * (size_t)ncap) : NULL;
                if (b) jtj = b;
                if (!a || !b) { e = cudaErrorMemoryAllocation; goto done; }
                jcap = ncap;
            }
            common_updates(T, s.i, s.j, jti + njobs, jtj + njobs);
            (s.row ? srow : sofd)[s.place] = make_int2((int)used, s.n);
            used += s.n;
            njobs += s.n;
        }
        if (used > maxjobs) maxjobs = used;
    }
    F.chunk_job[nch] = njobs;
    F.prod_cap = maxjobs;
    e = factor_sf_plan(c, T, srow, sofd);
    if (e != cudaSuccess) goto done;
    if (ildl_profiling())
        fprintf(stderr, "ildl profile: cuda: factor pulls split: %lld updates apart, at most %lld per chunk\n",
                (long long)njobs, (long long)maxjobs);
    e = upload(&F.d_split_row, srow, (size_t)nb, c);
    if (e == cudaSuccess) e = upload(&F.d_split_ofd, sofd, (size_t)nofd_all, c);
    if (e == cudaSuccess) e = upload(&F.d_job_ti, jti, (size_t)njobs, c);
    if (e == cudaSuccess) e = upload(&F.d_job_tj, jtj, (size_t)njobs, c);
    /* the products hold the factorization's value type (float in precision single) */
    if (F.sf_ntasks > 0 && njobs > 0 && F.sf_ring > maxjobs) maxjobs = F.sf_ring; /* a ring set by the tuning */
    if (e == cudaSuccess && maxjobs > 0)
        e = alloc(&F.d_prod, (size_t)maxjobs * TILE / (c->single ? 2 : 1), c);
done:
    free(srow);
    free(sofd);
    free(jti);
    free(jtj);
    free(cand);
    return e;
}

/* Append task (kind, r, a, b, c) to *v (capacity *cap, count *n); false when out of memory. */
static bool fsf_push(fsf_task **v, int64_t *n, int64_t *cap, int kind, int32_t r, int32_t a, int32_t b, int32_t c)
{
    if (*n == *cap) {
        int64_t nc = 2 * *cap + 1024;
        fsf_task *w = (fsf_task *)realloc(*v, sizeof(fsf_task) * (size_t)nc);
        if (!w) return false;
        *v = w;
        *cap = nc;
    }
    (*v)[(*n)++] = fsf_task{(int32_t)(kind << FSF_KIND_SHIFT) | r, a, b, c};
    return true;
}

/* The tasks in ticket order, row by row in level order (a topological order of the block rows):
 * the row's split products (the chunks' choice, as far as the ring allows), its diagonal tile,
 * its off-diagonal pulls, its solves FSF_SOLVE_TILES at a time, its column permutations. Each
 * product gets the ring slot after its row's previous one (wrapping to 0 where a tile's products
 * would not fit before the end) and waits until that slot's earlier uses were subtracted. */
#define FSF_SOLVE_TILES 4
/* Products per JOB task (four groups of warps at a time: the task's wait and signal paid once). */
#define FSF_JOB_BATCH 8
/* The sync-free schedule takes the last levels of at most this many block rows; the wider ones
 * before them run in the level schedule (perf-notes §91: on complete factors every level
 * sync-free took 1.08-1.47x the level schedule's time, this suffix 0.98-1.15x). */
#define ILDL_FSF_ROWS 4
cudaError_t factor_sf_plan(ildl_cuda_ctx *c, const ildl_tiles *T, const int2 *srow, const int2 *sofd)
{
    cuda_factor_work &F = c->fac;
    F.sf_ntasks = 0;
    int64_t njobs = F.chunk_job[F.nchunks], forced = c->tune.factor_sf_ring;
    /* (tasks hold their row in 28 bits and job ids in 32: beyond, the level schedule runs) */
    if (!F.all_dense || T->nb >= (1 << FSF_KIND_SHIFT) || njobs >= INT32_MAX) return cudaSuccess;
    /* the ring of split products: the level schedule's buffer of them (the largest chunk's,
     * prod_cap), so a handle that never asks for this schedule allocates nothing more for it;
     * where the products are more than it holds, a row's take at most half of it, so they never
     * wrap onto each other. The tuning's factor_sf_ring = N makes it N products. */
    int64_t ring = forced > 0 ? forced : (njobs < F.prod_cap ? njobs : F.prod_cap);
    if (ring < 1) ring = 1;
    int64_t rowcap = njobs <= ring ? ring : ring / 2, ntask = 0, tcap = 0, pos = 0, qg = 0;
    int32_t nb = T->nb, ch0 = 0;
    fsf_task *tasks = NULL;
    fsf_row *rows = (fsf_row *)calloc((size_t)nb + 1, sizeof(fsf_row));
    int32_t *uses = (int32_t *)calloc((size_t)ring, sizeof(int32_t));
    int32_t *juse = (int32_t *)calloc((size_t)njobs + 1, sizeof(int32_t)); /* per job */
    int2 *slot = (int2 *)malloc(sizeof(int2) * ((size_t)T->ntiles + 1)); /* per slot s of a row: ring, n */
    cudaError_t e = cudaSuccess;
    if (!rows || !uses || !juse || !slot) { e = cudaErrorMemoryAllocation; goto done; }
    {
        /* the sync-free suffix: the last levels of at most ILDL_FSF_ROWS rows each (the tuning's
         * factor_sf_rows: N, or -1 every level) */
        int wmax = c->tune.factor_sf_rows != 0 ? c->tune.factor_sf_rows : ILDL_FSF_ROWS;
        int32_t lev = T->nlevels;
        if (wmax < 0) lev = 0;
        else
            while (lev > 0 && T->level_ptr[lev] - T->level_ptr[lev - 1] <= wmax) lev--;
        int32_t r0 = T->level_ptr[lev];
        while (ch0 < F.nchunks && F.chunk_r0[ch0] < r0) ch0++;
    }
    for (int32_t r = 0; r < nb; r++) rows[T->level_rows[r]].pos = r;
    for (int32_t ch = 0; ch < ch0; ch++) qg += F.chunk_toff[ch + 1] - F.chunk_toff[ch];
    for (int32_t ch = ch0; ch < F.nchunks; ch++) {
        int64_t jbase = F.chunk_job[ch];
        for (int32_t r = F.chunk_r0[ch]; r < F.chunk_r0[ch] + F.chunk_n[ch]; r++) {
            int32_t i = T->level_rows[r];
            int64_t nt = T->row_ptr[i + 1] - T->row_ptr[i], rowjobs = 0;
            for (int64_t s = 0; s < nt; s++) {
                int2 sp = s == 0 ? srow[r] : sofd[qg + s - 1];
                slot[s] = make_int2(0, -1);
                if (sp.y <= 0 || rowjobs + sp.y > rowcap) continue; /* pulled in place */
                if (pos + sp.y > ring) pos = 0;
                for (int32_t x = 0; x < sp.y; x++) juse[jbase + sp.x + x] = uses[pos + x]++;
                for (int32_t x = 0; x < sp.y; x += FSF_JOB_BATCH)
                    if (!fsf_push(&tasks, &ntask, &tcap, FSF_JOB, r, (int32_t)(jbase + sp.x + x), (int32_t)(pos + x),
                                  sp.y - x < FSF_JOB_BATCH ? sp.y - x : FSF_JOB_BATCH)) {
                        e = cudaErrorMemoryAllocation;
                        goto done;
                    }
                slot[s] = make_int2((int)pos, sp.y);
                pos += sp.y;
                rowjobs += sp.y;
            }
            bool ok = fsf_push(&tasks, &ntask, &tcap, FSF_DIAG, r, slot[0].x, slot[0].y, 0);
            for (int64_t s = 1; ok && s < nt; s++)
                ok = fsf_push(&tasks, &ntask, &tcap, FSF_PULL, r, (int32_t)s, slot[s].x, slot[s].y);
            for (int64_t s = 1; ok && s < nt; s += FSF_SOLVE_TILES)
                ok = fsf_push(&tasks, &ntask, &tcap, FSF_SOLVE, r, (int32_t)s,
                              (int32_t)(nt - s < FSF_SOLVE_TILES ? nt - s : FSF_SOLVE_TILES), 0);
            int32_t ncol = (int32_t)(ildl_tiles_col_diag(T, i) - T->col_ptr[i]), ndeps = 0;
            for (int32_t q = 0; ok && q < ncol; q += FSF_SOLVE_TILES)
                ok = fsf_push(&tasks, &ntask, &tcap, FSF_COLS, r, q, ncol - q < FSF_SOLVE_TILES ? ncol - q : FSF_SOLVE_TILES, 0);
            for (int32_t q = 0; q < ncol; q++) /* the rows k < i of the suffix (the others are done) */
                ndeps += rows[T->row[T->col_tiles[T->col_ptr[i] + q]]].pos >= F.chunk_r0[ch0];
            if (!ok || ntask >= INT32_MAX / 2) { e = cudaErrorMemoryAllocation; goto done; }
            rows[r].ndeps = ndeps;
            rows[r].njobs = (int32_t)rowjobs;
            rows[r].total = (int32_t)nt; /* its diagonal and off-diagonal solves */
            qg += nt - 1;
        }
    }
    F.sf_ring = (int32_t)ring;
    F.sf_ch0 = ch0;
    F.sf_sync_len = 1 + 5 * (int64_t)nb + T->ntiles + ring;
    e = upload(&F.d_sf_tasks, tasks, (size_t)ntask, c);
    if (e == cudaSuccess) e = upload(&F.d_sf_row, rows, (size_t)nb, c);
    if (e == cudaSuccess) e = alloc(&F.d_sf_sync, (size_t)F.sf_sync_len, c);
    if (e == cudaSuccess) e = upload(&F.d_sf_job_use, juse, (size_t)njobs, c);
    if (e == cudaSuccess) F.sf_ntasks = (int32_t)ntask;
done:
    free(tasks);
    free(rows);
    free(uses);
    free(juse);
    free(slot);
    return e;
}

/* Phase C's column permutations, one block per tile (k,i), k < i, of a narrow chunk's rows i
 * (k_phase_c): their ids, chunk by chunk in row order; in the other chunks each row's block
 * walks its column (many rows: the blocks per row would only cost). */
cudaError_t colperm_plan(ildl_cuda_ctx *c, const ildl_tiles *T)
{
    cuda_factor_work &F = c->fac;
    int64_t total = 0, g = 0;
    F.chunk_col = (int64_t *)malloc(sizeof(int64_t) * ((size_t)F.nchunks + 1));
    if (!F.chunk_col) return cudaErrorMemoryAllocation;
    for (int32_t ch = 0; ch < F.nchunks; ch++) /* the narrow chunks' columns only */
        if (chunk_narrow(c, ch))
            for (int32_t r = F.chunk_r0[ch]; r < F.chunk_r0[ch] + F.chunk_n[ch]; r++) {
                int32_t i = T->level_rows[r];
                total += ildl_tiles_col_diag(T, i) - T->col_ptr[i];
            }
    int64_t *ct = (int64_t *)malloc(sizeof(int64_t) * ((size_t)total + 1));
    if (!ct) return cudaErrorMemoryAllocation;
    for (int32_t ch = 0; ch < F.nchunks; ch++) {
        F.chunk_col[ch] = g;
        if (!chunk_narrow(c, ch)) continue;
        for (int32_t r = F.chunk_r0[ch]; r < F.chunk_r0[ch] + F.chunk_n[ch]; r++) {
            int32_t i = T->level_rows[r];
            for (int64_t q = T->col_ptr[i], e = ildl_tiles_col_diag(T, i); q < e; q++) ct[g++] = T->col_tiles[q];
        }
    }
    F.chunk_col[F.nchunks] = g;
    cudaError_t e = upload(&F.d_coltile, ct, (size_t)g, c); /* g == total */
    free(ct);
    return e;
}
