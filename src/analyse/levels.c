/* levels.c -- level sets of the coarse graph. Block row i depends on every k < i with a
 * block (k,i): its diagonal block pulls the updates U_ki^T D_k U_ki. Rows of one level are
 * independent, so a level is one parallel step of the factorization and of the solves. */
#include "analyse/levels.h"
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"

int ildl_levels_compute(const ildl_coarse *C, ildl_levels *out)
{
    int status = ILDL_ERR_OUT_OF_MEMORY;
    int32_t nb = C->nb, nlevels = 0;
    int32_t *row_level = NULL, *level_ptr = NULL, *level_rows = NULL;
    memset(out, 0, sizeof(*out));

    row_level = ildl_calloc((size_t)nb, sizeof(int32_t));
    if (!row_level) goto cleanup;
    /* rows in ascending order: when row k is reached all its dependencies k' < k are final,
     * so pushing level(k)+1 to its block columns yields the longest path */
    for (int32_t k = 0; k < nb; k++) {
        for (int64_t p = C->row_ptr[k]; p < C->row_ptr[k + 1]; p++) {
            int32_t j = C->col[p];
            if (j > k && row_level[j] < row_level[k] + 1) row_level[j] = row_level[k] + 1;
        }
        if (row_level[k] + 1 > nlevels) nlevels = row_level[k] + 1;
    }

    /* counting sort by level; a stable scan keeps rows ascending inside a level */
    level_ptr = ildl_calloc((size_t)nlevels + 1, sizeof(int32_t));
    level_rows = ildl_malloc((size_t)nb * sizeof(int32_t));
    if (!level_ptr || !level_rows) goto cleanup;
    for (int32_t k = 0; k < nb; k++) level_ptr[row_level[k] + 1]++;
    for (int32_t l = 0; l < nlevels; l++) level_ptr[l + 1] += level_ptr[l];
    for (int32_t k = 0; k < nb; k++) level_rows[level_ptr[row_level[k]]++] = k;
    for (int32_t l = nlevels; l > 0; l--) level_ptr[l] = level_ptr[l - 1];
    level_ptr[0] = 0;

    out->nlevels = nlevels;
    out->level_ptr = level_ptr;
    out->level_rows = level_rows;
    out->row_level = row_level;
    return ILDL_SUCCESS;

cleanup:
    free(row_level);
    free(level_ptr);
    free(level_rows);
    return status;
}

void ildl_levels_free(ildl_levels *L)
{
    if (!L) return;
    free(L->level_ptr);
    free(L->level_rows);
    free(L->row_level);
    memset(L, 0, sizeof(*L));
}
