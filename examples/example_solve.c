/* example_solve.c -- the smallest complete use of libblockildl: a 2x2-block KKT system
 * [[H, B^T], [B, 0]] built in CSR, factored and solved; prints what ildl_info reports. */
#include <stdio.h>
#include <stdlib.h>
#include "blockildl.h"

int main(void)
{
    /* H = tridiag(-1, 4, -1) of order 4, B = [1 1 0 0; 0 0 1 1]: n = 6, indefinite. */
    enum { N = 6 };
    int64_t rowptr[N + 1];
    int32_t col[32];
    double val[32], b[N], x[N];
    int64_t k = 0;
    for (int32_t i = 0; i < N; i++) {
        rowptr[i] = k;
        for (int32_t j = 0; j < N; j++) {
            double v = 0.0;
            if (i < 4 && j < 4) v = (i == j) ? 4.0 : (abs(i - j) == 1 ? -1.0 : 0.0);
            else if (i >= 4 && j < 4) v = (j / 2 == i - 4) ? 1.0 : 0.0;
            else if (j >= 4 && i < 4) v = (i / 2 == j - 4) ? 1.0 : 0.0;
            if (v != 0.0) { col[k] = j; val[k] = v; k++; }
        }
    }
    rowptr[N] = k;
    for (int i = 0; i < N; i++) b[i] = 1.0;

    ildl_options opt;
    ildl_options_default(&opt);
    opt.backend = ILDL_BACKEND_AUTO; /* GPU if present, else CPU */
    ildl_handle *h = NULL;
    int st = ildl_setup(N, rowptr, col, val, &opt, &h);
    if (st) { fprintf(stderr, "setup: %s (%s)\n", ildl_strerror(st), ildl_last_error(NULL)); return 1; }
    st = ildl_factor(h, NULL);
    if (!st) st = ildl_solve(h, b, x);
    ildl_info info;
    ildl_get_info(h, &info);
    printf("status: %s; %d iterations; true relative residual %.2e\n", ildl_strerror(st), info.iterations,
           info.true_residual);
    for (int i = 0; i < N; i++) printf("x[%d] = %+.6f\n", i, x[i]);
    ildl_destroy(h);
    return st == ILDL_SUCCESS ? 0 : 1;
}
