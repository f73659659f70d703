/* scale.h -- symmetric scaling of A: As = S A S with S = diag(s). */
#ifndef ILDL_ANALYSE_SCALE_H
#define ILDL_ANALYSE_SCALE_H
#include "core/csr.h"

/* Symmetric Ruiz equilibration: iterate s_i <- s_i / sqrt(max_j |s_i a_ij s_j|) until every
 * row's largest scaled magnitude is within tol of 1 (or max_iter sweeps). s[n] output; a row
 * that is entirely zero gets s_i = 1. Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_scale_equilibrate(const ildl_csr *A, int max_iter, double tol, double *s);

/* As = S A S in place on the values of A (pattern unchanged). */
void ildl_scale_apply(ildl_csr *A, const double *s);

#endif
