/* dense_rules_t.h -- the pivot rules for one value type: included by dense_rules.h once for
 * double and once for float, with ILDL_RT the type and ILDL_RR(name) the name. No include
 * guard on purpose. Every expression is written once here; with FMA contraction off (both
 * backends) the CPU and the GPU evaluate it to the same bits. */

/* The pivot a 1x1 step divides by: d, or copysign(perturb, d) (perturb if d == 0) when
 * |d| < pivot_tol or d == 0; *perturbed says whether it was replaced. */
ILDL_HD_INLINE ILDL_RT ILDL_RR(ildl_pivot1)(ILDL_RT d, ILDL_RT pivot_tol, ILDL_RT perturb, int *perturbed)
{
    if (ILDL_RABS(d) < pivot_tol || d == 0) {
        *perturbed = 1;
        return (d == 0) ? perturb : ILDL_RCOPYSIGN(perturb, d);
    }
    *perturbed = 0;
    return d;
}

/* 1 if [a b; b c] is safe to invert as a 2x2 pivot (see ildl_dense_params). |det|/g >= tol*g
 * avoids squaring g, which could overflow for huge entries. */
ILDL_HD_INLINE int ILDL_RR(ildl_pivot2_ok)(ILDL_RT a, ILDL_RT b, ILDL_RT c, ILDL_RT tol)
{
    ILDL_RT g = ILDL_RMAX(ILDL_RABS(a), ILDL_RMAX(ILDL_RABS(b), ILDL_RABS(c)));
    ILDL_RT det = a * c - b * b;
    return g >= tol && g > 0 && det != 0 && ILDL_RABS(det) / g >= tol * g;
}

/* The determinant of the 2x2 pivot [a b; b c], as every solve with it uses it. */
ILDL_HD_INLINE ILDL_RT ILDL_RR(ildl_pivot2_det)(ILDL_RT a, ILDL_RT b, ILDL_RT c)
{
    return a * c - b * b;
}

/* (*y0, *y1) = [a b; b c]^{-1} (x0, x1), det = ildl_pivot2_det(a, b, c): the one formula of the
 * factorization's 2x2 step, the off-diagonal solve and the D solve. */
ILDL_HD_INLINE void ILDL_RR(ildl_pivot2_solve)(ILDL_RT a, ILDL_RT b, ILDL_RT c, ILDL_RT det, ILDL_RT x0,
                                        ILDL_RT x1, ILDL_RT *y0, ILDL_RT *y1)
{
    *y0 = (c * x0 - b * x1) / det;
    *y1 = (a * x1 - b * x0) / det;
}

/* Bunch-Kaufman and rook, first test at step k: akk = |a(k,k)|, colmax = the largest
 * off-diagonal magnitude of column k. 1 if a(k,k) is taken as a 1x1 pivot at once. */
ILDL_HD_INLINE int ILDL_RR(ildl_pivot_diag_first)(ILDL_RT akk, ILDL_RT colmax, ILDL_RT alpha)
{
    return colmax == 0 || akk >= alpha * colmax;
}

/* Bunch-Kaufman, when the first test failed: lambda = |a(r,k)| = colmax of column k, sigma =
 * the largest off-diagonal magnitude of column r, arr = |a(r,r)|. ILDL_PICK_K, _R or _PAIR. */
ILDL_HD_INLINE int ILDL_RR(ildl_pivot_bk_choose)(ILDL_RT akk, ILDL_RT lambda, ILDL_RT sigma, ILDL_RT arr,
                                          ILDL_RT alpha)
{
    if (akk * sigma >= alpha * lambda * lambda) return ILDL_PICK_K;
    if (arr >= alpha * sigma) return ILDL_PICK_R;
    return ILDL_PICK_PAIR;
}

/* Rook, one move of the walk after the first test failed: |a(q,r)| = colmax is the largest
 * off-diagonal entry of column q; column r's largest off-diagonal magnitude is rowmax, at
 * jmax; arr = |a(r,r)|; it moves made so far in an m-row tile. ILDL_PICK_R (1x1 at r),
 * ILDL_PICK_PAIR (2x2 of q and r) or ILDL_PICK_MOVE (on to column jmax). colmax grows
 * strictly, so the walk ends within m moves; the bound only guards against non-finite input. */
ILDL_HD_INLINE int ILDL_RR(ildl_pivot_rook_step)(ILDL_RT arr, ILDL_RT rowmax, ILDL_RT colmax, int jmax,
                                          int q, int it, int m, ILDL_RT alpha)
{
    if (arr >= alpha * rowmax) return ILDL_PICK_R;
    if (jmax == q || rowmax <= colmax || it >= m) return ILDL_PICK_PAIR;
    return ILDL_PICK_MOVE;
}
