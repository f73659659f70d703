/* test_cost.c -- the ladder's model of a step's time (analyse/cost.h): finite and positive on
 * both backends; the complete block fill of an order and blocking costs at least what its
 * level-1 fill does (its pattern contains the other's: more block products, capacity, levels and
 * chain), to factor and per iteration, at the same drop tolerance; the CPU's products and entries
 * take less with more threads; on CUDA a store of dense tiles factored with tau = 0 costs less
 * (no drop, no leftover scan), and tau changes nothing else; the analysis' model grows with A. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include "blockildl.h"
#include "analyse/analyse.h"
#include "analyse/cost.h"
#include "support/testutil.h"

static void analyse(const ildl_csr *A, int complete, ildl_analysis *an)
{
    ildl_options o;
    ildl_options_default(&o);
    o.ordering = ILDL_ORDER_AMD;
    o.blocking = ILDL_BLOCKING_RB; /* the same blocks whatever the fill */
    o.scaling = ILDL_SCALING_NONE;
    if (complete) {
        o.fill_level = ILDL_MAX_FILL_LEVEL;
        o.fill_factor = 0.0;
        o.drop_tol = 0.0;
    }
    char msg[256];
    assert_int_equal(ildl_analyse(A, NULL, &o, an, msg, sizeof msg), ILDL_SUCCESS);
}

static void test_complete_costs_more(void **state)
{
    (void)state;
    ildl_csr mats[2];
    ildl_test_laplace2d(40, 0.2, &mats[0]);
    ildl_test_laplace3d(12, 0.5, &mats[1]);
    for (int m = 0; m < 2; m++) {
        ildl_analysis inc, cmp;
        analyse(&mats[m], 0, &inc);
        analyse(&mats[m], 1, &cmp);
        assert_int_equal(inc.tiles.nb, cmp.tiles.nb);
        assert_true(cmp.tiles.total_cap > inc.tiles.total_cap);
        int inc_sparse = 0; /* the level-1 fill's capacities leave some tile sparse */
        for (int64_t t = 0; t < inc.tiles.ntiles; t++) inc_sparse |= inc.tiles.format[t] == ILDL_TILE_SPARSE;
        assert_true(inc_sparse);
        for (int64_t t = 0; t < cmp.tiles.ntiles; t++) assert_int_equal(cmp.tiles.format[t], ILDL_TILE_DENSE);
        int backends[2] = {ILDL_BACKEND_CPU, ILDL_BACKEND_CUDA};
        for (int b = 0; b < 2; b++) {
            ildl_step_cost ci, cc, c4, ci0, cc0;
            ildl_cost_model(&inc, 1e-4, backends[b], 1, &ci);
            ildl_cost_model(&cmp, 1e-4, backends[b], 1, &cc);
            assert_true(isfinite(ci.factor) && ci.factor > 0.0 && isfinite(ci.iteration) && ci.iteration > 0.0);
            assert_true(cc.factor > ci.factor);
            assert_true(cc.iteration > ci.iteration);
            /* tau = 0: the dense path on CUDA for the dense store only */
            ildl_cost_model(&inc, 0.0, backends[b], 1, &ci0);
            ildl_cost_model(&cmp, 0.0, backends[b], 1, &cc0);
            assert_memory_equal(&ci0, &ci, sizeof ci);
            assert_true(cc0.iteration == cc.iteration);
            if (backends[b] == ILDL_BACKEND_CUDA) assert_true(cc0.factor > 0.0 && cc0.factor < cc.factor);
            else assert_true(cc0.factor == cc.factor);
            ildl_cost_model(&cmp, 1e-4, backends[b], 4, &c4);
            if (backends[b] == ILDL_BACKEND_CPU) {
                assert_true(c4.factor < cc.factor);
                assert_true(c4.iteration < cc.iteration);
            } else { /* the GPU's model has no threads */
                assert_memory_equal(&c4, &cc, sizeof cc);
            }
        }
        ildl_analysis_free(&inc);
        ildl_analysis_free(&cmp);
        ildl_csr_free(&mats[m]);
    }
    assert_true(ildl_cost_analysis(2000) > ildl_cost_analysis(1000));
    assert_true(ildl_cost_analysis(1000) > 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_complete_costs_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
