/* pc_blockildl.c -- the PETSc preconditioner PCBLOCKILDL ("blockildl"): libblockildl's
 * block-incomplete LDL^T of a sequential matrix (MATSEQAIJ; MATSEQSBAIJ and other sequential
 * formats through a copy as MATSEQAIJ), applied by ildl_apply on host vectors. As the sub-PC of
 * PCBJACOBI or PCASM each rank factors its own block; with -pc_blockildl_device -1 (the default)
 * a rank takes the GPU of its node-local rank (modulo the GPUs it sees), the CPU backend where
 * there is none. Options: -pc_blockildl_* (PCSetFromOptions, shown by -help), reported by
 * -pc_view / -ksp_view. A setup on the same nonzero pattern refactors (ildl_factor with the new
 * values); a new pattern analyses again. docs/petsc.md. */
#include <petsc/private/pcimpl.h>
#include "blockildl.h"
#include "blockildl_petsc.h"

#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
#error "PCBLOCKILDL needs PETSc built with real double scalars"
#endif

typedef struct {
    ildl_options opt;
    ildl_handle *h;
    PetscInt device;  /* -1: by node-local rank */
    Mat aij;          /* the MATSEQAIJ copy of a matrix of another format, or NULL */
    int64_t *rowptr;  /* the pattern given to ildl_setup (PetscInt may be 32 or 64 bits) */
    int32_t *colind;
    PetscInt n, nnz;
} PC_BlockILDL;

static const char *const backends[] = {"auto", "cpu", "cuda", "PCBlockILDLBackend", "", NULL};
static const char *const pivots[] = {"none", "bk", "rook", "PCBlockILDLPivot", "", NULL};
static const char *const orderings[] = {"amd", "rcm", "gmc", "metis", "natural", "auto", "gmc_fill", "PCBlockILDLOrdering", "",
                                        NULL};
static const char *const methods[] = {"ildl", "block_jacobi", "fixed_point", "PCBlockILDLMethod", "", NULL};
static const char *const blockings[] = {"rb", "br", "sn", "PCBlockILDLBlocking", "", NULL};
static const char *const scalings[] = {"none", "equilibrate", "matching", "PCBlockILDLScaling", "", NULL};
static const char *const refactor_scalings[] = {"recompute", "keep", "equilibrate", "PCBlockILDLRefactorScaling", "",
                                                NULL};
static const char *const precisions[] = {"double", "single", "mixed", "PCBlockILDLPrecision", "", NULL};
static const char *const apply_modes[] = {"ldlt", "spd", "PCBlockILDLApplyMode", "", NULL};

/* The GPU of this process's node-local rank (among the ranks of PETSC_COMM_WORLD on its node),
 * modulo the GPUs it sees; 0 where there is none (the backend then falls back to the CPU). */
static PetscErrorCode local_device(PetscInt *dev)
{
    MPI_Comm node;
    PetscMPIInt rank;
    int ndev = ildl_device_count();
    PetscFunctionBegin;
    *dev = 0;
    if (ndev <= 1) PetscFunctionReturn(0);
    PetscCallMPI(MPI_Comm_split_type(PETSC_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_rank(node, &rank));
    PetscCallMPI(MPI_Comm_free(&node));
    *dev = rank % ndev;
    PetscFunctionReturn(0);
}

static PetscErrorCode PCReset_BlockILDL(PC pc)
{
    PC_BlockILDL *p = (PC_BlockILDL *)pc->data;
    PetscFunctionBegin;
    ildl_destroy(p->h);
    p->h = NULL;
    PetscCall(MatDestroy(&p->aij));
    PetscCall(PetscFree(p->rowptr));
    PetscCall(PetscFree(p->colind));
    p->n = p->nnz = 0;
    PetscFunctionReturn(0);
}

static PetscErrorCode PCSetUp_BlockILDL(PC pc)
{
    PC_BlockILDL *p = (PC_BlockILDL *)pc->data;
    Mat A = pc->pmat, M = A;
    PetscBool isaij, done;
    const PetscInt *ia, *ja;
    const PetscScalar *va;
    PetscInt n;
    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isaij));
    if (!isaij) {
        PetscMPIInt size;
        PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
        PetscCheck(size == 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
                   "blockildl factors a sequential matrix: use it as -sub_pc_type of PCBJACOBI or PCASM in parallel");
        /* another sequential format (SBAIJ, BAIJ, dense): a MATSEQAIJ copy, its values refreshed on
         * every setup */
        PetscCall(MatConvert(A, MATSEQAIJ, p->aij ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &p->aij));
        M = p->aij;
    }
    PetscCall(MatGetRowIJ(M, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "blockildl: cannot get the matrix's rows");
    PetscCall(MatSeqAIJGetArrayRead(M, &va));
    int st = ILDL_SUCCESS;
    const char *what = "ildl_factor";
    if (!p->h || pc->flag == DIFFERENT_NONZERO_PATTERN || n != p->n || ia[n] != p->nnz) {
        /* a new pattern: analyse it (ildl_setup), then factor */
        ildl_destroy(p->h);
        p->h = NULL;
        PetscCall(PetscFree(p->rowptr));
        PetscCall(PetscFree(p->colind));
        PetscCall(PetscMalloc1(n + 1, &p->rowptr));
        PetscCall(PetscMalloc1(ia[n] > 0 ? ia[n] : 1, &p->colind));
        for (PetscInt i = 0; i <= n; i++) p->rowptr[i] = ia[i];
        for (PetscInt k = 0; k < ia[n]; k++) p->colind[k] = (int32_t)ja[k];
        p->n = n;
        p->nnz = ia[n];
        ildl_options o = p->opt;
        if (p->device < 0) {
            PetscInt d;
            PetscCall(local_device(&d));
            o.device_id = (int)d;
        } else {
            o.device_id = (int)p->device;
        }
        what = "ildl_setup";
        st = ildl_setup((int32_t)n, p->rowptr, p->colind, va, &o, &p->h);
        if (st == ILDL_SUCCESS) {
            what = "ildl_factor";
            st = ildl_factor(p->h, NULL);
        }
    } else {
        st = ildl_factor(p->h, va); /* same pattern, same entry order: new values */
    }
    PetscCall(MatSeqAIJRestoreArrayRead(M, &va));
    PetscCall(MatRestoreRowIJ(M, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(st == ILDL_SUCCESS, PetscObjectComm((PetscObject)pc),
               st == ILDL_ERR_OUT_OF_MEMORY ? PETSC_ERR_MEM : PETSC_ERR_LIB, "blockildl: %s failed: %s (%s)", what,
               ildl_strerror(st), p->h ? ildl_last_error(p->h) : ildl_last_error(NULL));
    PetscFunctionReturn(0);
}

static PetscErrorCode PCApply_BlockILDL(PC pc, Vec x, Vec y)
{
    PC_BlockILDL *p = (PC_BlockILDL *)pc->data;
    const PetscScalar *xa;
    PetscScalar *ya;
    PetscFunctionBegin;
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayWrite(y, &ya));
    int st = ildl_apply(p->h, xa, ya, ILDL_MEMORY_HOST, NULL);
    PetscCall(VecRestoreArrayWrite(y, &ya));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCheck(st == ILDL_SUCCESS, PetscObjectComm((PetscObject)pc), PETSC_ERR_LIB, "blockildl: ildl_apply failed: %s (%s)",
               ildl_strerror(st), ildl_last_error(p->h));
    PetscFunctionReturn(0);
}

static PetscErrorCode PCSetFromOptions_BlockILDL(PC pc, PetscOptionItems *PetscOptionsObject)
{
    PC_BlockILDL *p = (PC_BlockILDL *)pc->data;
    ildl_options *o = &p->opt;
    PetscInt fill_level = o->fill_level, max_block = o->max_block_size, threads = o->num_threads;
    PetscInt sweeps = o->fp_sweeps;
    PetscReal fill_factor = o->fill_factor, drop = o->drop_tol, pivot_tol = o->pivot_tol;
    PetscEnum backend = (PetscEnum)o->backend, pivot = (PetscEnum)o->pivoting, blocking = (PetscEnum)o->blocking;
    PetscEnum ordering = (PetscEnum)o->ordering, method = (PetscEnum)o->method;
    PetscEnum scaling = (PetscEnum)o->scaling, rescale = (PetscEnum)o->refactor_scaling;
    PetscEnum precision = (PetscEnum)o->precision, mode = (PetscEnum)o->apply_mode;
    PetscFunctionBegin;
    PetscOptionsHeadBegin(PetscOptionsObject, "BlockILDL options (libblockildl)");
    PetscCall(PetscOptionsEnum("-pc_blockildl_backend", "where to factor and apply", "ildl_options.backend", backends,
                               backend, &backend, NULL));
    PetscCall(PetscOptionsInt("-pc_blockildl_device", "CUDA device; -1: the node-local rank's", "ildl_options.device_id",
                              p->device, &p->device, NULL));
    PetscCall(PetscOptionsInt("-pc_blockildl_fill_level", "block level of fill", "ildl_options.fill_level", fill_level,
                              &fill_level, NULL));
    PetscCall(PetscOptionsReal("-pc_blockildl_fill_factor", "capacity per block, times its entries of A (<= 0: unlimited)",
                               "ildl_options.fill_factor", fill_factor, &fill_factor, NULL));
    PetscCall(PetscOptionsReal("-pc_blockildl_threshold", "drop tolerance tau", "ildl_options.drop_tol", drop, &drop, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_pivot", "pivoting in the diagonal blocks", "ildl_options.pivoting", pivots,
                               pivot, &pivot, NULL));
    PetscCall(PetscOptionsReal("-pc_blockildl_pivot_tol", "pivots below this (after scaling) are perturbed",
                               "ildl_options.pivot_tol", pivot_tol, &pivot_tol, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_method",
                               "ildl: block-iLDL^T; block_jacobi: the blocks' inverses; fixed_point: Jacobi sweeps",
                               "ildl_options.method", methods, method, &method, NULL));
    PetscCall(PetscOptionsInt("-pc_blockildl_fp_sweeps", "fixed_point: sweeps", "ildl_options.fp_sweeps", sweeps,
                              &sweeps, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_ordering", "ordering of the blocks (auto: docs/ordering.md)",
                               "ildl_options.ordering", orderings, ordering, &ordering, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_blocking", "blocking strategy", "ildl_options.blocking", blockings, blocking,
                               &blocking, NULL));
    PetscCall(PetscOptionsInt("-pc_blockildl_max_block_size", "rows per block, 1..32", "ildl_options.max_block_size",
                              max_block, &max_block, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_scaling", "scaling of A", "ildl_options.scaling", scalings, scaling,
                               &scaling, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_refactor_scaling", "scaling of new values on the same pattern",
                               "ildl_options.refactor_scaling", refactor_scalings, rescale, &rescale, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_precision", "precision of the factor", "ildl_options.precision",
                               precisions, precision, &precision, NULL));
    PetscCall(PetscOptionsEnum("-pc_blockildl_apply_mode", "ldlt: M = LDL^T; spd: M = L|D|L^T (for MINRES, CG)",
                               "ildl_options.apply_mode", apply_modes, mode, &mode, NULL));
    PetscCall(PetscOptionsInt("-pc_blockildl_threads", "CPU threads (0: OpenMP's default)", "ildl_options.num_threads",
                              threads, &threads, NULL));
    PetscOptionsHeadEnd();
    o->backend = (int)backend;
    o->pivoting = (int)pivot;
    o->blocking = (int)blocking;
    o->ordering = (int)ordering;
    o->method = (int)method;
    o->fp_sweeps = (int)sweeps;
    o->scaling = (int)scaling;
    o->refactor_scaling = (int)rescale;
    o->precision = (int)precision;
    o->apply_mode = (int)mode;
    o->fill_level = (int)fill_level;
    o->fill_factor = (double)fill_factor;
    o->drop_tol = (double)drop;
    o->pivot_tol = (double)pivot_tol;
    o->max_block_size = (int)max_block;
    o->num_threads = (int)threads;
    PetscFunctionReturn(0);
}

static PetscErrorCode PCView_BlockILDL(PC pc, PetscViewer viewer)
{
    PC_BlockILDL *p = (PC_BlockILDL *)pc->data;
    const ildl_options *o = &p->opt;
    PetscBool ascii;
    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
    if (!ascii) PetscFunctionReturn(0);
    PetscCall(PetscViewerASCIIPrintf(viewer, "  libblockildl %s: method %s, backend %s, fill level %d, fill factor %g, threshold %g, "
                                             "pivot %s, ordering %s, blocking %s, scaling %s, refactor scaling %s, precision %s, apply %s\n",
                                     ildl_version(), methods[o->method], backends[o->backend], o->fill_level, o->fill_factor, o->drop_tol,
                                     pivots[o->pivoting], orderings[o->ordering], blockings[o->blocking], scalings[o->scaling],
                                     refactor_scalings[o->refactor_scaling], precisions[o->precision],
                                     apply_modes[o->apply_mode]));
    if (p->h) {
        ildl_info info;
        if (ildl_get_info(p->h, &info) == ILDL_SUCCESS)
            PetscCall(PetscViewerASCIIPrintf(viewer,
                                             "  factored on %s%s%s: n %d, ordering %s, %d blocks, %d levels, %lld entries kept (fill %.2f), "
                                             "%d perturbed pivots, inertia (%d, %d, %d)\n",
                                             info.backend == ILDL_BACKEND_CUDA ? "the GPU " : "the CPU",
                                             info.backend == ILDL_BACKEND_CUDA ? info.device_name : "",
                                             info.rung > 0 ? " (a rung of the ladder)" : "", (int)info.n,
                                             info.ordering_used >= 0 && info.ordering_used <= 6 ? orderings[info.ordering_used] : "?",
                                             (int)info.num_blocks, (int)info.num_levels, (long long)info.factor_nnz,
                                             info.fill, (int)info.num_perturbed, (int)info.inertia_pos,
                                             (int)info.inertia_neg, (int)info.inertia_zero));
    } else {
        PetscCall(PetscViewerASCIIPrintf(viewer, "  not factored yet\n"));
    }
    PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_BlockILDL(PC pc)
{
    PetscFunctionBegin;
    PetscCall(PCReset_BlockILDL(pc));
    PetscCall(PetscFree(pc->data));
    PetscFunctionReturn(0);
}

PetscErrorCode PCCreate_BlockILDL(PC pc)
{
    PC_BlockILDL *p;
    PetscFunctionBegin;
    PetscCall(PetscNew(&p));
    ildl_options_default(&p->opt);
    p->device = -1;
    pc->data = (void *)p;
    pc->ops->setup = PCSetUp_BlockILDL;
    pc->ops->apply = PCApply_BlockILDL;
    pc->ops->reset = PCReset_BlockILDL;
    pc->ops->destroy = PCDestroy_BlockILDL;
    pc->ops->setfromoptions = PCSetFromOptions_BlockILDL;
    pc->ops->view = PCView_BlockILDL;
    PetscFunctionReturn(0);
}

PetscErrorCode PCBlockILDLRegister(void)
{
    static PetscBool done = PETSC_FALSE;
    PetscFunctionBegin;
    if (done) PetscFunctionReturn(0);
    PetscCall(PCRegister(PCBLOCKILDL, PCCreate_BlockILDL));
    done = PETSC_TRUE;
    PetscFunctionReturn(0);
}
