/* kkt_petsc.c -- libblockildl as a PETSc preconditioner on a distributed saddle-point system.
 *
 * The system: on an m x m grid (m x m x m with -dim 3), per cell k an unknown u_k and a multiplier
 * p_k, interleaved (rows 2k, 2k+1), so that a partition of the rows by cells gives every rank both
 * kinds:
 *   [ H  B^T ] [u]   H = the 5-point (3D: 7-point) Laplacian on u (Dirichlet), times 10^(s_k) on
 *   [ B  -dI ] [p]   its diagonal (an interior-point-like spread of s decades, -spread S);
 *                    B: p_k = u_k - u_right (the last cell of a grid row: u_k alone); d = 1e-6.
 * Quasi-definite, so every principal block (each rank's, under PCBJACOBI) is nonsingular and
 * indefinite. b = A * ones. Solved with the KSP and PC of the options database, e.g.
 *   mpiexec -n 2 ./kkt_petsc -m 100 -ksp_type fgmres -pc_type bjacobi -sub_pc_type blockildl
 *   ./kkt_petsc -pc_type blockildl -pc_blockildl_fill_level 2 -ksp_view
 * Prints the iterations and the true relative residual ||b - A x|| / ||b||; exits 0 when that is
 * at most -check_tol (1e-6), 1 otherwise (the tests run it). docs/petsc.md. */
#include <math.h>
#include <petscksp.h>
#include "blockildl_petsc.h"

int main(int argc, char **argv)
{
    PetscInt m = 40, dim = 2, lo, hi;
    PetscReal spread = 4.0, check_tol = 1e-6, delta = 1e-6;
    Mat A;
    Vec x, b, r, ones;
    KSP ksp;
    PetscCall(PetscInitialize(&argc, &argv, NULL, "kkt_petsc: a saddle-point system solved with PCBLOCKILDL\n"));
    PetscCall(PCBlockILDLRegister());
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
    PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3");
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-spread", &spread, NULL));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-check_tol", &check_tol, NULL));
    PetscInt plane = m * m, cells = dim == 3 ? plane * m : plane, n = 2 * cells;

    PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
    /* rows by whole cells: a rank's range starts at an even row */
    PetscMPIInt rank, size;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscInt mycells = cells / size + (rank < cells % size);
    PetscCall(MatSetSizes(A, 2 * mycells, 2 * mycells, n, n));
    PetscCall(MatSetType(A, MATAIJ));
    PetscCall(MatSeqAIJSetPreallocation(A, 9, NULL));
    PetscCall(MatMPIAIJSetPreallocation(A, 9, NULL, 6, NULL));
    PetscCall(MatGetOwnershipRange(A, &lo, &hi));
    for (PetscInt row = lo; row < hi; row++) {
        PetscInt k = row / 2, gi = (k % plane) / m, gj = k % m, gl = k / plane, cols[9], nc = 0;
        PetscScalar vals[9];
        if (row % 2 == 0) { /* u_k: Laplacian row, then B^T */
            /* a fixed pseudo-random exponent per cell in [-1/2, 1/2) */
            double s = (double)((k * 2654435761u) % 1000u) / 1000.0 - 0.5;
            cols[nc] = row, vals[nc++] = 2.0 * dim * pow(10.0, spread * s);
            if (dim == 3 && gl > 0) cols[nc] = 2 * (k - plane), vals[nc++] = -1.0;
            if (dim == 3 && gl < m - 1) cols[nc] = 2 * (k + plane), vals[nc++] = -1.0;
            if (gi > 0) cols[nc] = 2 * (k - m), vals[nc++] = -1.0;
            if (gi < m - 1) cols[nc] = 2 * (k + m), vals[nc++] = -1.0;
            if (gj > 0) cols[nc] = 2 * (k - 1), vals[nc++] = -1.0;
            if (gj < m - 1) cols[nc] = 2 * (k + 1), vals[nc++] = -1.0;
            cols[nc] = 2 * k + 1, vals[nc++] = 1.0;                 /* B(k, k) = 1 */
            if (gj > 0) cols[nc] = 2 * (k - 1) + 1, vals[nc++] = -1.0; /* B(k-1, k) = -1 */
        } else { /* p_k: B row, then -delta */
            cols[nc] = 2 * k, vals[nc++] = 1.0;
            if (gj < m - 1) cols[nc] = 2 * (k + 1), vals[nc++] = -1.0;
            cols[nc] = row, vals[nc++] = -delta;
        }
        PetscCall(MatSetValues(A, 1, &row, nc, cols, vals, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecDuplicate(b, &ones));
    PetscCall(VecSet(ones, 1.0));
    PetscCall(MatMult(A, ones, b));

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPFGMRES));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
    PetscCall(KSPSetFromOptions(ksp));
    double t0 = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    double t1 = MPI_Wtime();
    /* the same pattern with new values (every entry doubled): the PC refactors */
    PetscCall(MatScale(A, 2.0));
    PetscCall(VecScale(b, 2.0));
    PetscCall(KSPSolve(ksp, b, x));
    double t2 = MPI_Wtime();

    PetscInt its;
    PetscReal nr, nb;
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &nr));
    PetscCall(VecNorm(b, NORM_2, &nb));
    PetscReal rel = nr / nb;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "kkt_petsc: n %" PetscInt_FMT " on %d ranks, %" PetscInt_FMT
                          " iterations (after the refactorization), true relative residual %.3e, "
                          "setup + solve %.4f s, refactor + solve %.4f s: %s\n",
                          n, (int)size, its, (double)rel, t1 - t0, t2 - t1,
                          rel <= check_tol ? "converged" : "NOT converged"));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&ones));
    PetscCall(MatDestroy(&A));
    int converged = rel <= check_tol;
    PetscCall(PetscFinalize());
    return converged ? 0 : 1;
}
