/* dense_check.h -- checks shared by the dense tile factorization tests (one test file per
 * pivoting strategy): structure of a result, U^T D U reconstruction, generators. */
#ifndef ILDL_TEST_DENSE_CHECK_H
#define ILDL_TEST_DENSE_CHECK_H
#include <stdint.h>
#include "cpu/dense_factor.h"

/* The result is well formed (cmocka asserts). */
void dt_check_structure(int m, const double *f, const ildl_dense_result *res);
/* M = U^T D U and, if G != NULL, G = |U|^T |D| |U| (tiles with ld 32). */
void dt_reconstruct(int m, const double *f, const ildl_dense_result *res, double *M, double *G);
/* ||P A P^T - U^T D U||_F / ||A||_F. */
double dt_recon_error(int m, const double *a0, const double *f, const ildl_dense_result *res);
/* max |U(r,c)| over the strict upper triangle. */
double dt_max_abs_u(int m, const double *f);
/* Symmetric random tile, entries in (-1,1), diagonal 0 with probability zfrac. */
void dt_gen_general(int m, double zfrac, uint64_t seed, double *a);
/* KKT tile [[H, B^T],[B, 0]] (m/3 constraints), rows shuffled if shuffle. */
void dt_gen_kkt(int m, int shuffle, uint64_t seed, double *a);

/* ||U^T D x - b||_F / ||b||_F for the off-diagonal solve x = D^-1 U^-T b (tiles with ld 32). */
double dt_offdiag_residual(int mi, int mj, const double *f, const ildl_dense_result *res,
                           const double *x, const double *b);

#endif
