/* blockildl_petsc.h -- libblockildl as a PETSc preconditioner (libblockildl_petsc, built with
 * -DILDL_PETSC=ON): PCBLOCKILDL, "blockildl". Call PCBlockILDLRegister() once after
 * PetscInitialize(); then -pc_type blockildl (a sequential matrix) or -sub_pc_type blockildl
 * (PCBJACOBI, PCASM: each rank's block) selects it, and -pc_blockildl_* set its options
 * (-help lists them). docs/petsc.md. */
#ifndef BLOCKILDL_PETSC_H
#define BLOCKILDL_PETSC_H
#include <petscpc.h>

#define PCBLOCKILDL "blockildl"

/* Register PCBLOCKILDL with PCRegister (idempotent). */
PETSC_EXTERN PetscErrorCode PCBlockILDLRegister(void);
/* The PC's constructor (PCRegister's function), for programs that register it themselves. */
PETSC_EXTERN PetscErrorCode PCCreate_BlockILDL(PC pc);

#endif
